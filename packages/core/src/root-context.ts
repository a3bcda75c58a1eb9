import type { SendOptions, SenderContext } from './context';
import type { ReplySink, RequestOptions } from './future-process';
import { spawnActor } from './internal/actor-context';
import type { Runtime } from './internal/runtime';
import { entryOf } from './entry';
import { deliver, sendEntry } from './internal/deliver';
import { requestEntry, requestToSink } from './internal/send';
import { POISON_PILL, Terminated, Unwatch, Watch } from './messages';
import type { PID } from './pid';
import type { Entry, LocalProcess } from './process';
import type { ProcessRegistry } from './process-registry';
import type { Props, SpawnerContext } from './props';

/** A one-shot process that resolves when the watched process terminates. */
class RootWatcher implements LocalProcess {
  dead = false;
  readonly capacity = Infinity;
  pid!: PID;
  constructor(
    readonly owner: ProcessRegistry,
    readonly resolve: (t: Terminated) => void,
  ) {}
  post(): boolean {
    return true;
  }
  sendSystemMessage(_pid: PID, message: unknown): void {
    if (!(message instanceof Terminated) || this.dead) return;
    this.dead = true;
    this.owner.remove(this.pid);
    this.resolve(message);
  }
  stop(): void {}
}

/**
 * The context of code outside actors (`system.root`): send, request, spawn top-level actors,
 * stop, poison, and watch (a promise of the `Terminated`).
 *
 * @example
 * const pid = system.root.spawnNamed(Props.fromProducer(() => new Ponger()), 'ponger');
 * const pong = await system.root.request(pid, 'ping', { timeoutMs: 1000 });
 */
export class RootContext implements SenderContext, SpawnerContext {
  readonly self = undefined;
  private readonly watchers = new Map<string, RootWatcher[]>();

  constructor(private readonly runtime: Runtime) {}

  /** The ActorSystem (typed through SenderContext, so this file need not import the system). */
  get system(): SenderContext['system'] {
    return this.runtime as unknown as SenderContext['system'];
  }

  send(pid: PID, message: unknown, options?: SendOptions): void {
    // A bare message is its own entry.
    if (options === undefined) sendEntry(this.runtime, pid, message as Entry, false);
    else {
      const entry = entryOf(message, options.sender, options.header);
      sendEntry(this.runtime, pid, entry, options.priority === 'urgent');
    }
  }

  trySend(pid: PID, message: unknown, options?: SendOptions): boolean {
    const entry = entryOf(message, options?.sender, options?.header);
    return deliver(this.runtime.registry, pid, entry, options?.priority === 'urgent') === undefined;
  }

  request<T = unknown>(pid: PID, message: unknown, options?: RequestOptions): Promise<T> {
    return requestEntry<T>(this.runtime, pid, message, options, this, undefined);
  }

  /**
   * A request whose outcome goes to `sink.settle` instead of a promise: for runtimes built on
   * core that map or retry replies before settling a promise of their own (one object per
   * request instead of a second promise and its closures). Same timeout, abort and failure
   * rules as `request`; an error that the request's own promise would reject with is passed as
   * `error`.
   */
  requestTo(pid: PID, message: unknown, sink: ReplySink, options?: RequestOptions): void {
    requestToSink(this.runtime, pid, message, options, sink, this, undefined);
  }

  spawn(props: Props): PID {
    return spawnActor(this.runtime, props, undefined, undefined);
  }

  spawnNamed(props: Props, name: string): PID {
    return spawnActor(this.runtime, props, undefined, name);
  }

  stop(pid: PID): void {
    this.runtime.registry.get(pid).stop(pid);
  }

  poison(pid: PID): void {
    sendEntry(this.runtime, pid, entryOf(POISON_PILL), false);
  }

  /** Resolves with `Terminated { who, why }` when `pid` stops (at once if it does not exist). */
  watch(pid: PID): Promise<Terminated> {
    const registry = this.runtime.registry;
    return new Promise<Terminated>((resolve) => {
      const key = pid.toString();
      const watcher: RootWatcher = new RootWatcher(registry, (t) => {
        const list = this.watchers.get(key)?.filter((w) => w !== watcher) ?? [];
        if (list.length === 0) this.watchers.delete(key);
        else this.watchers.set(key, list);
        resolve(t);
      });
      watcher.pid = registry.add(registry.nextId('watch$'), watcher);
      this.watchers.set(key, [...(this.watchers.get(key) ?? []), watcher]);
      registry.get(pid).sendSystemMessage(pid, new Watch(watcher.pid));
    });
  }

  /** Stops every root watch of `pid` (their promises never resolve). */
  unwatch(pid: PID): void {
    const key = pid.toString();
    const registry = this.runtime.registry;
    for (const w of this.watchers.get(key) ?? []) {
      w.dead = true;
      registry.remove(w.pid);
      registry.get(pid).sendSystemMessage(pid, new Unwatch(w.pid));
    }
    this.watchers.delete(key);
  }
}
