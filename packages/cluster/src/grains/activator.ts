import { Props, type ActorSystem } from '@granary/core';
import {
  entryDeadline,
  entryHeader,
  entryMessage,
  entryOf,
  entrySender,
  type Entry,
  type LocalProcess,
} from '@granary/core/internal';
import { Activation, Deactivate, idleClock } from './activation';
import type { DeactivationReason } from './grain';
import { replyToOf } from './internal/call-headers';
import { ACK, control } from './internal/control-replies';
import type { GrainHost } from './internal/grain-host';
import { IdleList } from './internal/idle-list';
import type { KindSlot } from './internal/kind-slot';

/** Core's entry helpers as module-level aliases (a CommonJS import is a getter per read). */
const messageOf = entryMessage;
const senderOf = entrySender;

/** What the activator asks of the runtime around it. */
export interface ActivatorDeps {
  readonly system: ActorSystem;
  readonly host: GrainHost;
  /** False while leaving or stopped: no new activations. */
  accepting(): boolean;
}

/**
 * The per-member activator: at most one activation per identity on this member, ever. It routes
 * accepted calls into the activation's mailbox, holds messages that arrive while it deactivates
 * (they start the next activation once the old one has ended), passivates idle activations on
 * the system's shared timer wheel, and drains shards before they are released.
 */
export class Activator {
  /** Hand-off to the per-kind Props producer (spawn calls it synchronously). */
  private next: Activation | undefined = undefined;

  constructor(private readonly deps: ActivatorDeps) {}

  /**
   * Delivers one accepted message (the router checked kind, ownership and deadlock): to the live
   * activation, held if it is deactivating, or to a new activation. `entry` is the call's core
   * lane entry (message, sender, headers), posted unchanged; `ack`: it is a send. `hash` is the
   * identity's fnv1a32 (its shard's table key).
   */
  deliver(
    slot: KindSlot,
    identity: string,
    shard: number,
    hash: number,
    entry: Entry,
    ack: boolean,
  ): void {
    let a = slot.get(shard, identity, hash);
    if (a === undefined) {
      if (!this.deps.accepting() || slot.draining[shard]) {
        return this.deps.host.replyNotOwner(senderOf(entry), slot.def.name, shard);
      }
      const allowed = slot.def.canActivate;
      if (allowed !== undefined && !allowed(identity)) {
        return this.deps.host.reply(senderOf(entry), control({ c: 'denied' }));
      }
      a = this.activate(slot, identity, shard, hash);
    }
    if (a.state === 'deactivating') {
      if (!a.hold({ entry, ack }, slot.def.capacity)) {
        this.deps.host.reply(
          senderOf(entry),
          control({ c: 'mailbox-full', capacity: slot.def.capacity }),
        );
      }
      return;
    }
    this.post(a, entry, ack);
  }

  /** Number of live activations (all kinds). */
  countOf(slot: KindSlot): number {
    return slot.count;
  }

  /** Asks an activation to end after the messages already routed to it. Idempotent. */
  requestDeactivate(a: Activation, reason: DeactivationReason): void {
    if (a.state !== 'active') return;
    a.state = 'deactivating';
    a.slot.idle?.remove(a);
    // A full bounded mailbox refuses it: posted again when the next turn ends (one is queued).
    if (!a.proc.post(a.pid, entryOf(new Deactivate(reason)), false)) a.deferDeactivate(reason);
  }

  /** A turn finished. */
  turnEnded(a: Activation, influencing: boolean): void {
    a.inflight--;
    if (influencing) this.touch(a);
    const deferred = a.deferredDeactivate;
    if (deferred !== undefined && a.proc.post(a.pid, entryOf(new Deactivate(deferred)), false)) {
      a.deferDeactivate(undefined);
    }
  }

  /**
   * onDeactivate ran: the activation is gone. Held messages start the next activation (never two
   * at once: this one has ended), or get NotOwner when this member may no longer activate.
   */
  ended(a: Activation): void {
    const slot = a.slot;
    slot.remove(a);
    a.finish();
    const held = a.takeHeld();
    if (held === undefined || held.length === 0) return;
    const host = this.deps.host;
    if (
      !this.deps.accepting() ||
      slot.draining[a.shard] ||
      !host.canServe(slot.def.name, a.shard)
    ) {
      for (const m of held) host.replyNotOwner(senderOf(m.entry), slot.def.name, a.shard);
      return;
    }
    const next = this.activate(slot, a.identity, a.shard);
    for (const m of held) this.post(next, m.entry, m.ack);
  }

  /** Drains a shard before its release: no new activations, every activation ends. */
  async drain(slot: KindSlot, shard: number, reason: DeactivationReason): Promise<void> {
    slot.draining[shard] = 1;
    const ending = slot.inShard(shard).map((a) => {
      const done = a.ended();
      this.requestDeactivate(a, reason);
      return done;
    });
    await Promise.all(ending);
  }

  /** Ends every activation of the kind in `shard` (fenced or claim vanished). */
  evict(slot: KindSlot, shard: number, reason: DeactivationReason): void {
    for (const a of slot.inShard(shard)) this.requestDeactivate(a, reason);
  }

  private activate(slot: KindSlot, identity: string, shard: number, hash?: number): Activation {
    const a = new Activation(slot, identity, shard, idleClock());
    slot.add(a, hash);
    this.next = a;
    const system = this.deps.system;
    const pid = system.root.spawn((slot.props ??= this.propsOf(slot)));
    // Just spawned here, so the registry answers with its actor (a LocalProcess).
    a.pid = pid;
    a.proc = system.registry.get(pid) as LocalProcess;
    this.next = undefined;
    if (Number.isFinite(slot.def.idleTimeoutMs)) {
      slot.idle ??= new IdleList(slot.def.idleTimeoutMs, this.deps.system.timers, (x) =>
        this.requestDeactivate(x, 'idle'),
      );
      slot.idle.add(a);
    }
    return a;
  }

  private post(a: Activation, entry: Entry, ack: boolean): void {
    const host = this.deps.host;
    const proc = a.proc;
    if (proc.dead) {
      // Its actor was stopped under it (the system shuts down): nothing ran, the caller retries.
      return host.replyNotOwner(senderOf(entry), a.slot.def.name, a.shard);
    }
    // No idle stamp here: a busy grain never passivates (inflight > 0) and the turn's end stamps
    // it, so one clock read per call is enough.
    a.inflight++;
    // A send: the grain sees its `sender` option as the sender; the caller gets ACK.
    const header = ack ? entryHeader(entry) : undefined;
    const ok = proc.post(
      a.pid,
      ack ? entryOf(messageOf(entry), replyToOf(header), header, entryDeadline(entry)) : entry,
      false,
    );
    if (!ok) {
      a.inflight--;
      host.reply(senderOf(entry), control({ c: 'mailbox-full', capacity: a.slot.def.capacity }));
    } else if (ack) host.reply(senderOf(entry), ACK);
  }

  private touch(a: Activation): void {
    const now = idleClock();
    if (a.slot.idle !== undefined) a.slot.idle.touch(a, now);
    else a.lastActivity = now;
  }

  private propsOf(slot: KindSlot): Props {
    return Props.fromProducer(() => this.next!, { mailbox: { capacity: slot.def.capacity } });
  }
}
