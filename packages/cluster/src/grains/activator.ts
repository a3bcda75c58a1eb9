import { InvalidArgumentError, Props, traceContextOf, type Clock, type PID } from '@granary/core';
import {
  entryDeadline,
  entryHeader,
  entryMessage,
  entryOf,
  entrySender,
  type Entry,
  spawnUnlisted,
} from '@granary/core/internal';
import {
  ActivationDeniedError,
  MemberFencedError,
  NotOwnerError,
  TurnTimeoutError,
} from '../errors';
import type { ShardGate } from '../membership/fencing';
import { OverloadedError, type OverloadLimit } from '../overload/errors';
import { Activation } from './activation';
import { Deactivate, type ActivationHost, type ActivationTurn } from './activation-host';
import { identityProblem } from './grain-identity';
import type { DeactivationReason } from './grain';
import { ActivationTable } from './internal/activation-table';
import { replyToOf } from './internal/call-headers';
import type { GrainServices } from './internal/grain-services';
import type { KindDefinition } from './kind';
import type { KindStats } from './grain-stats';
import { Passivation, idleStamp } from './passivation';
import { TurnWatch } from './turn-watch';
import { turnStuck } from './internal/stuck-turn';
import { warnLongTurn, warnNoReply } from './internal/turn-warnings';

/** Core's entry helpers as module-level aliases (a CommonJS import is a getter per read). */
const messageOf = entryMessage;
const senderOf = entrySender;
const deadlineOf = entryDeadline;
const headerOf = entryHeader;

/** What a send's caller gets once the message is accepted (any reply that is not an error). */
const ACK = true;

/**
 * The host of one kind on this member: what its activations talk to. It keeps at most one
 * activation per identity (the activation table), posts accepted calls into the activation's
 * mailbox, holds messages that arrive while an activation deactivates (they start the next one
 * once the old one has ended), passivates idle activations, and drains shards before they are
 * released. The kind's router hands it the calls; its shard gate says whether this member may
 * start an activation.
 */
export class Activator implements ActivationHost {
  /** The kind's live activations, by shard and identity. */
  readonly table: ActivationTable;
  /** 1 while the shard is being drained for release: no new activations in it. */
  readonly draining: Uint8Array;
  /** Idle passivation (undefined when idleTimeoutMs is Infinity). */
  private readonly passivation: Passivation | undefined;
  private readonly props: Props;
  /** The system's clock: idle stamps and the activation log. */
  private readonly clock: Clock;
  /** Hand-off to the Props producer (spawn calls it synchronously). */
  private next: Activation | undefined = undefined;
  /** Awaiting turns, for longTurnMs and turnTimeoutMs (undefined when both are Infinity). */
  readonly watch: TurnWatch<ActivationTurn> | undefined;
  /** Turns that ran past longTurnMs. */
  longTurns = 0;
  /** Turns found stuck past turnTimeoutMs. */
  timedOutTurns = 0;
  /** Requests whose turn returned undefined without respond(): their callers got no reply. */
  noReplies = 0;
  /** Served-turn statistics, while enabled (HostedGrains.enableStats). */
  stats: KindStats | undefined = undefined;
  /** Messages posted to activations and not finished (the kind's total mailbox depth). */
  queued = 0;
  /** Calls refused because an activation's mailbox (or held queue) was full. */
  mailboxRejections = 0;
  /** Activations whose onActivate failed. */
  failedActivations = 0;
  /** Deactivations so far, by reason. */
  readonly deactivations = new Map<DeactivationReason, number>();

  constructor(
    readonly def: KindDefinition,
    readonly shardCount: number,
    readonly gate: ShardGate,
    readonly services: GrainServices,
  ) {
    this.table = new ActivationTable(shardCount);
    this.draining = new Uint8Array(shardCount);
    const system = services.system;
    this.clock = system.clock;
    this.passivation = Number.isFinite(def.idleTimeoutMs)
      ? new Passivation(def.idleTimeoutMs, system.timers, system.clock, (a) =>
          this.requestDeactivate(a, 'idle'),
        )
      : undefined;
    this.props = Props.fromProducer(() => this.next!, { mailbox: { capacity: def.capacity } });
    this.watch =
      Number.isFinite(def.longTurnMs) || Number.isFinite(def.turnTimeoutMs)
        ? new TurnWatch<ActivationTurn>(
            services.system.timers,
            services.system.clock,
            def.longTurnMs,
            def.turnTimeoutMs,
            // Every watched turn is an Activation's (activation.ts makes them).
            (turn, ms) => this.longTurn(turn.activation as Activation, ms, true),
            (turn, ms) => turnStuck(this, turn.activation as Activation, ms),
          )
        : undefined;
  }

  /**
   * Delivers one call the router accepted (kind, drain and deadlock checked): to the live
   * activation, held if it is deactivating, or to a new one, which only a member that serves
   * the shard may start. The identity is `key` from index `from` on (see ActivationTable.get),
   * `hash` its fnv1a32; `entry` is the call's core lane entry (message, sender, headers),
   * posted unchanged; `ack`: it is a send; `chain`: a grain made it. The member's load admits
   * it or not (LoadShedder.admit), after the checks that send the caller to another member.
   */
  deliver(
    key: string,
    from: number,
    shard: number,
    hash: number,
    entry: Entry,
    ack: boolean,
    chain: boolean,
  ) {
    let a = this.table.get(shard, hash, key, from);
    if (a === undefined) {
      const identity = from === 0 ? key : key.slice(from);
      if (!this.services.accepting || !this.gate.canServe(shard)) {
        return this.notOwner(senderOf(entry), identity, shard);
      }
      // A peer writes its own PIDs: an identity no caller's API lets through (an empty one, one
      // over 1 KiB) is refused here, once per activation, not per call.
      const problem = identityProblem(identity);
      if (problem !== undefined) {
        return this.services.reply(senderOf(entry), new InvalidArgumentError('identity', problem));
      }
      const allowed = this.def.canActivate;
      if (allowed !== undefined && !allowed(identity)) {
        const denied = new ActivationDeniedError(this.def.name, identity);
        return this.services.reply(senderOf(entry), denied);
      }
      const refused = this.services.load.admit(chain, true, deadlineOf(entry));
      if (refused !== undefined) return this.refuse(senderOf(entry), identity, refused);
      a = this.activate(identity, shard, hash, deadlineOf(entry));
      // The activation's span is a child of the call that started it.
      if (this.services.telemetry.tracing) a.traceParent = traceContextOf(headerOf(entry));
    } else {
      const refused = this.services.load.admit(chain, false, deadlineOf(entry));
      if (refused !== undefined) return this.refuse(senderOf(entry), a.identity, refused);
    }
    if (a.stuckMs !== undefined) return this.stuckReply(a, senderOf(entry));
    if (a.state === 'deactivating') {
      if (!a.hold({ entry, ack }, this.def.capacity)) this.mailboxFull(a, senderOf(entry));
      return;
    }
    this.post(a, entry, ack);
  }

  /**
   * Answers `to` with NotOwnerError naming the owner this member believes in, or, when this
   * whole member is fenced, with MemberFencedError: the truth is that membership is unavailable
   * here, not that another member owns the shard.
   */
  notOwner(to: PID | undefined, identity: string, shard: number): void {
    if (to === undefined) return;
    const name = this.def.name;
    this.services.reply(
      to,
      this.gate.memberFenced()
        ? new MemberFencedError(name, identity, this.services.cluster.id)
        : new NotOwnerError(name, identity, this.gate.ownerOf(shard)),
    );
  }

  /** Answers `to` with OverloadedError naming `limit` (no stack: this runs per refused call). */
  private refuse(to: PID | undefined, identity: string, limit: OverloadLimit): void {
    if (to === undefined) return;
    const error = OverloadedError.of(limit, this.services.cluster.id, this.def.name, identity);
    this.services.reply(to, error);
  }

  /**
   * A request's turn returned undefined and did not respond: counted, logged at warn once per
   * kind, since its caller only learns of it at its deadline (as DeadlineExceededError).
   */
  noReply(a: Activation, message: unknown): void {
    if (this.noReplies++ > 0) return;
    warnNoReply(this.services.logger, { kind: this.def.name, identity: a.identity }, message);
  }

  /**
   * A turn ran past longTurnMs (`running`: it still runs, seen by the watch; else it just ended):
   * counted every time, logged once per activation.
   */
  longTurn(a: Activation, ms: number, running: boolean): void {
    this.longTurns++;
    if (!a.firstLongTurn()) return;
    const { name: kind, longTurnMs } = this.def;
    const grain = { kind, identity: a.identity, activationId: a.id, longTurnMs };
    warnLongTurn(this.services.logger, grain, ms, running);
  }

  /** Answers `to` with TurnTimeoutError (the activation's stuck turn still runs). */
  stuckReply(a: Activation, to: PID | undefined): void {
    if (to === undefined) return;
    const def = this.def;
    this.services.reply(
      to,
      new TurnTimeoutError(def.name, a.identity, def.turnTimeoutMs, a.stuckMs!),
    );
  }

  /** Asks an activation to end after the messages already routed to it. Idempotent. */
  requestDeactivate(a: Activation, reason: DeactivationReason): void {
    if (a.state !== 'active') return;
    a.state = 'deactivating';
    this.passivation?.remove(a);
    // A full bounded mailbox refuses it: posted again when the next turn ends (one is queued).
    if (!a.proc.post(a.proc.self, entryOf(new Deactivate(reason)), false))
      a.deferDeactivate(reason);
  }

  /** A turn finished (`stamp`: the idle stamp of its timed end, when it was timed). */
  turnEnded(a: Activation, influencing: boolean, stamp?: number): void {
    this.services.load.completed++;
    this.finished(a, influencing, stamp);
  }

  /** A call expired in the mailbox: dropped before its turn (its caller has given up). */
  dropped(a: Activation): void {
    this.services.counters.droppedInMailbox++;
    this.finished(a, false);
  }

  private finished(a: Activation, influencing: boolean, stamp?: number): void {
    a.inflight--;
    this.queued--;
    this.services.load.pending--;
    if (influencing) {
      // A timed turn read the clock as it ended: one read per turn, not two.
      const now = stamp ?? idleStamp(this.clock);
      if (this.passivation !== undefined) this.passivation.touch(a, now);
      else a.lastActivity = now;
    }
    const deferred = a.deferredDeactivate;
    if (
      deferred !== undefined &&
      a.proc.post(a.proc.self, entryOf(new Deactivate(deferred)), false)
    ) {
      a.deferDeactivate(undefined);
    }
  }

  /** onActivate is about to run. */
  activated(a: Activation): void {
    if (this.stats !== undefined) this.stats.activated++;
    this.log(a, 'activate', undefined);
  }

  /** onActivate finished (`error`: it failed) after `ms`, when timed. */
  activationDone(_a: Activation, ms: number | undefined, error: unknown): void {
    if (error !== undefined) this.failedActivations++;
    if (ms !== undefined) this.services.metrics?.activation(this.def.name, error === undefined, ms);
  }

  /**
   * onDeactivate ran: the activation is gone. Held messages start the next activation (never two
   * at once: this one has ended), or get NotOwner when this member may no longer activate.
   */
  ended(a: Activation, reason: DeactivationReason): void {
    if (this.stats !== undefined) this.stats.deactivated++;
    this.log(a, 'deactivate', reason);
    this.deactivations.set(reason, (this.deactivations.get(reason) ?? 0) + 1);
    this.table.remove(a);
    a.finish();
    const held = a.takeHeld();
    if (held === undefined || held.length === 0) return;
    const shard = a.shard;
    if (!this.services.accepting || this.draining[shard] || !this.gate.canServe(shard)) {
      for (const m of held) this.notOwner(senderOf(m.entry), a.identity, shard);
      return;
    }
    const next = this.activate(a.identity, shard, undefined, deadlineOf(held[0]!.entry));
    for (const m of held) this.post(next, m.entry, m.ack);
  }

  /**
   * Drains a shard before its release: no new activations, every activation ends. Undefined
   * when the shard has none (most of a member's 16,384 per kind): its release need not wait a turn.
   */
  drain(shard: number, reason: DeactivationReason): Promise<void> | undefined {
    this.draining[shard] = 1;
    const ends = this.end(shard, reason);
    return ends.length === 0 ? undefined : Promise.all(ends).then(() => undefined);
  }

  /**
   * Asks every activation of `shard` to end (fenced, claim vanished, shutdown) and returns when
   * each will have ended.
   */
  end(shard: number, reason: DeactivationReason): Array<Promise<void>> {
    return this.table.inShard(shard).map((a) => {
      const done = a.ended();
      this.requestDeactivate(a, reason);
      return done;
    });
  }

  private activate(
    identity: string,
    shard: number,
    hash: number | undefined,
    firstDeadline: number | undefined,
  ): Activation {
    const a = new Activation(this, identity, shard, idleStamp(this.clock), firstDeadline);
    this.table.add(a, hash);
    this.next = a;
    // Not listed in the registry: the activation table is this actor's index (calls reach it
    // through the kind's router), and the activation stops it when it ends.
    a.proc = spawnUnlisted(this.services.system, this.props);
    this.next = undefined;
    this.passivation?.add(a);
    return a;
  }

  private post(a: Activation, entry: Entry, ack: boolean): void {
    const proc = a.proc;
    if (proc.dead) {
      // Its actor was stopped under it (the system shuts down): nothing ran, the caller retries.
      return this.notOwner(senderOf(entry), a.identity, a.shard);
    }
    // No idle stamp here: a busy grain never passivates (inflight > 0) and the turn's end stamps
    // it, so one clock read per call is enough.
    a.inflight++;
    this.queued++;
    const load = this.services.load;
    load.pending++;
    // A send: the grain sees its `sender` option as the sender; the caller gets ACK.
    const header = ack ? headerOf(entry) : undefined;
    const ok = proc.post(
      proc.self,
      ack
        ? entryOf(messageOf(entry), replyToOf(header, senderOf(entry)), header, deadlineOf(entry))
        : entry,
      false,
    );
    if (!ok) {
      a.inflight--;
      this.queued--;
      load.pending--;
      this.mailboxFull(a, senderOf(entry));
    } else if (ack) this.services.reply(senderOf(entry), ACK);
  }

  /** The activation's mailbox (or its held messages) is at the kind's capacity: refused. */
  private mailboxFull(a: Activation, to: PID | undefined): void {
    this.mailboxRejections++;
    this.services.load.refused['mailbox.capacity']++;
    this.refuse(to, a.identity, 'mailbox.capacity');
  }

  private log(a: Activation, type: 'activate' | 'deactivate', reason: string | undefined): void {
    const log = this.services.onActivation;
    if (log === undefined) return;
    log({
      type,
      kind: this.def.name,
      identity: a.identity,
      activationId: a.id,
      member: this.services.cluster.id,
      at: this.clock.now(),
      ...(reason === undefined ? {} : { reason }),
    });
  }
}
