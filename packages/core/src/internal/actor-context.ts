import type { Context, ReceiveFunc, SendOptions, SenderContext } from '../context';
import { InvalidArgumentError, SystemShutdownError } from '../errors';
import { FutureProcess, type RequestOptions } from '../future-process';
import { POISON_PILL, RECEIVE_TIMEOUT, STARTED, Unwatch, Watch } from '../messages';
import { PID } from '../pid';
import { entryOf } from '../entry';
import type { MessageEnvelope, SenderFunc } from '../middleware';
import type { Entry } from '../process';
import type { Props } from '../props';
import type { TimerWheel } from '../timer-wheel';
import { ActorLifecycle } from './actor-lifecycle';
import { F_UNLISTED } from './cell-flags';
import { Envelope } from './envelope';
import type { Runtime } from './runtime';
import { deliver, sendEntry } from './deliver';
import { requestEntry } from './send';
import { Continuation } from './system-messages';

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Starts an actor: registers it (taken name → NameExistsError), links it to its parent, and
 * queues Started. Shared by the root context and actor contexts.
 */
export function spawnActor(
  rt: Runtime,
  props: Props,
  parent: ActorContext | undefined,
  name: string | undefined,
): PID {
  if (rt.isShuttingDown) throw new SystemShutdownError(rt.name);
  if (name !== undefined && (typeof name !== 'string' || name.length === 0)) {
    throw new InvalidArgumentError('name', 'spawnNamed needs a non-empty string');
  }
  const cell = new ActorContext(rt, props, parent?.self);
  const id =
    name === undefined ? rt.registry.nextId() : parent ? `${parent.self.id}/${name}` : name;
  cell.self = rt.registry.add(id, cell);
  if (parent === undefined) rt.topLevelSpawned(cell.self);
  else parent.adopt(cell.self);
  cell.pushSystem(STARTED);
  rt.dispatcher.wake(cell);
  return cell.self;
}

/**
 * Starts an actor the registry does not list: it is reached only through the returned process
 * and its PID (`self`, which caches it; a PID made again from the same id finds nothing). For
 * runtimes on core that keep their own index of many actors: a grain kind keeps its activations
 * in its activation table, and listing each in the registry too cost a map insert into the map
 * of every live actor per activation (13% of the CPU of a local activation, grains-activation;
 * docs/performance-notes.md) and an entry per idle grain. It is not a top-level actor:
 * ActorSystem.shutdown neither finds nor waits for it, its owner stops it. It has no parent and
 * its failures go to the guardian like a top-level actor's.
 */
export function spawnUnlisted(rt: Runtime, props: Props): ActorContext {
  if (rt.isShuttingDown) throw new SystemShutdownError(rt.name);
  const cell = new ActorContext(rt, props, undefined);
  const pid = new PID(rt.registry.address, rt.registry.nextId());
  pid._p = cell;
  cell.self = pid;
  cell.flags |= F_UNLISTED;
  cell.pushSystem(STARTED);
  rt.dispatcher.wake(cell);
  return cell;
}

/** An actor as its `receive` sees it: the cell plus the Context API. */
export class ActorContext extends ActorLifecycle implements Context {
  /** The ActorSystem (typed through SenderContext, so this file need not import the system). */
  get system(): SenderContext['system'] {
    return this.runtime as unknown as SenderContext['system'];
  }

  get message(): unknown {
    const c = this.cur;
    return c instanceof Envelope ? c.message : c;
  }

  get sender(): PID | undefined {
    const c = this.cur;
    return c instanceof Envelope ? c.sender : undefined;
  }

  get headers(): Readonly<Record<string, string>> {
    const c = this.cur;
    return (c instanceof Envelope ? c.header : undefined) ?? NO_HEADERS;
  }

  get deadline(): number | undefined {
    const c = this.cur;
    return c instanceof Envelope ? c.deadline : undefined;
  }

  get children(): PID[] {
    return this.kids === null ? [] : [...this.kids.values()];
  }

  get receiveTimeout(): number {
    return this.ext?.receiveTimeoutMs ?? 0;
  }

  get timers(): TimerWheel {
    return this.runtime.timers;
  }

  /** @internal */
  adopt(child: PID): void {
    (this.kids ??= new Map()).set(child.id, child);
  }

  // ── Sending ────────────────────────────────────────────────────────────────────────────

  send(pid: PID, message: unknown, options?: SendOptions): void {
    const chain = this.props.senderChain;
    if (chain !== undefined) {
      chain(this, pid, { message, ...options });
      return;
    }
    // A bare message is its own entry.
    if (options === undefined) sendEntry(this.runtime, pid, message as Entry, false);
    else {
      const entry = entryOf(message, options.sender, options.header);
      sendEntry(this.runtime, pid, entry, options.priority === 'urgent');
    }
  }

  trySend(pid: PID, message: unknown, options?: SendOptions): boolean {
    const chain = this.props.senderChain;
    if (chain !== undefined) return this.tryThrough(chain, pid, { message, ...options });
    const entry = entryOf(message, options?.sender, options?.header);
    const urgent = options?.priority === 'urgent';
    return deliver(this.runtime.registry, pid, entry, urgent) === undefined;
  }

  /**
   * trySend through sender middleware, which returns nothing: the chain's last step
   * (deliverEnvelope) leaves whether the target took the message in this actor's extras
   * (`tried`, undefined while no trySend runs), read back here.
   */
  private tryThrough(chain: SenderFunc, pid: PID, envelope: MessageEnvelope): boolean {
    const x = this.extras();
    const outer = x.tried;
    x.tried = true;
    try {
      chain(this, pid, envelope);
      return x.tried;
    } finally {
      x.tried = outer;
    }
  }

  /** The last step of the sender-middleware chain. @internal */
  deliverEnvelope(_ctx: SenderContext, target: PID, envelope: MessageEnvelope): void {
    const entry = entryOf(envelope.message, envelope.sender, envelope.header, envelope.deadline);
    const urgent = envelope.priority === 'urgent';
    const x = this.ext;
    if (x !== null && x.tried !== undefined) {
      x.tried = deliver(this.runtime.registry, target, entry, urgent) === undefined;
    } else sendEntry(this.runtime, target, entry, urgent);
  }

  request<T = unknown>(pid: PID, message: unknown, options?: RequestOptions): Promise<T> {
    return requestEntry<T>(this.runtime, pid, message, options, this, this.props.senderChain);
  }

  respond(message: unknown): void {
    const c = this.cur;
    // A local request's entry is its future: complete it directly (what a send to its PID
    // would end in), unless sender middleware must see the reply or the future is settled.
    if (
      c instanceof FutureProcess &&
      this.props.senderChain === undefined &&
      !c.dead &&
      c.owner === this.runtime.registry
    ) {
      c.complete(message);
      return;
    }
    const to = this.sender;
    if (to === undefined) {
      this.runtime.deadLetters.publish(this.self, message, undefined, 'no-sender');
      return;
    }
    this.send(to, message);
  }

  forward(pid: PID): void {
    const c = this.cur;
    if (!(c instanceof Envelope)) return this.send(pid, c);
    // The deadline goes on with the request (SendOptions has no deadline: only forward keeps one).
    const envelope = {
      message: c.message,
      sender: c.sender,
      header: c.header,
      deadline: c.deadline,
    };
    const chain = this.props.senderChain;
    if (chain !== undefined) chain(this, pid, envelope);
    else this.deliverEnvelope(this, pid, envelope);
  }

  // ── Spawning and stopping ──────────────────────────────────────────────────────────────

  spawn(props: Props): PID {
    return spawnActor(this.runtime, props, this, undefined);
  }

  spawnNamed(props: Props, name: string): PID {
    return spawnActor(this.runtime, props, this, name);
  }

  override stop(pid: PID): void {
    if (pid === this.self || pid.equals(this.self)) super.stop(pid);
    else this.runtime.registry.get(pid).stop(pid);
  }

  poison(pid: PID): void {
    sendEntry(this.runtime, pid, entryOf(POISON_PILL), false);
  }

  watch(pid: PID): void {
    (this.extras().watching ??= new Map()).set(`${pid.address}/${pid.id}`, pid);
    this.runtime.registry.get(pid).sendSystemMessage(pid, new Watch(this.self));
  }

  unwatch(pid: PID): void {
    this.ext?.watching?.delete(`${pid.address}/${pid.id}`);
    this.runtime.registry.get(pid).sendSystemMessage(pid, new Unwatch(this.self));
  }

  // ── Receive timeout ────────────────────────────────────────────────────────────────────

  setReceiveTimeout(ms: number): void {
    if (!(ms > 0 && Number.isFinite(ms))) {
      throw new InvalidArgumentError(
        'ms',
        `setReceiveTimeout needs a positive number of ms, got ${ms}`,
      );
    }
    const x = this.extras();
    x.receiveTimeoutMs = ms;
    x.lastActivity = this.runtime.clock.monotonic();
    x.receiveTimer?.cancel();
    x.onReceiveTimer ??= () => this.receiveTimerFired();
    x.receiveTimer = this.runtime.timers.schedule(ms, x.onReceiveTimer);
  }

  cancelReceiveTimeout(): void {
    const x = this.ext;
    if (x === null) return;
    x.receiveTimeoutMs = 0;
    x.receiveTimer?.cancel();
    x.receiveTimer = undefined;
  }

  /**
   * The wheel entry fired. Messages only stamp `lastActivity` (no timer work per message);
   * if one came since, the entry is re-armed for the remainder instead.
   */
  private receiveTimerFired(): void {
    const x = this.ext!;
    x.receiveTimer = undefined;
    if (this.dead || x.receiveTimeoutMs === 0) return;
    const now = this.runtime.clock.monotonic();
    const idle = now - x.lastActivity;
    if (idle < x.receiveTimeoutMs) {
      x.receiveTimer = this.runtime.timers.schedule(x.receiveTimeoutMs - idle, x.onReceiveTimer!);
      return;
    }
    x.lastActivity = x.firedAt = now;
    x.receiveTimer = this.runtime.timers.schedule(x.receiveTimeoutMs, x.onReceiveTimer!);
    if (x.timeoutQueued) return;
    x.timeoutQueued = true;
    this.sendSystemMessage(this.self, RECEIVE_TIMEOUT);
  }

  // ── Stash, behaviors, reentrancy ───────────────────────────────────────────────────────

  stash(): void {
    (this.extras().stash ??= []).push(this.cur);
  }

  unstashAll(): void {
    const x = this.ext;
    if (x === null || x.stash === undefined) return;
    const stashed = x.stash;
    x.stash = undefined;
    this.prependUser(stashed);
  }

  become(behavior: ReceiveFunc): void {
    (this.extras().behaviors ??= []).push(behavior);
  }

  unbecome(): void {
    this.ext?.behaviors?.pop();
  }

  reenterAfter<T>(
    promise: Promise<T>,
    callback: (value: T | undefined, error: unknown) => void | Promise<void>,
  ): void {
    const entry = this.cur;
    promise.then(
      (value) => this.continueWith(new Continuation(entry, () => callback(value, undefined))),
      (error: unknown) =>
        this.continueWith(new Continuation(entry, () => callback(undefined, error))),
    );
  }

  private continueWith(c: Continuation): void {
    if (this.dead) {
      this.runtime.logger.debug({ actor: this.self.toString() }, 'reenterAfter after stop');
      return;
    }
    this.sendSystemMessage(this.self, c);
  }
}
