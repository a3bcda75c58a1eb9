import type { PID } from '@granary/core';
import {
  entryHeader,
  entryMessage,
  entrySender,
  type Entry,
  type LocalProcess,
  type ProcessRegistry,
} from '@granary/core/internal';
import { fnv1a32 } from '../placement/shard-of';
import type { Activator } from './activator';
import { deadlockOf } from './deadlock-detection';
import { H_ACK, H_CHAIN } from './internal/call-headers';

/**
 * Module-level aliases of core's entry helpers: a CommonJS import is a getter on core's exports
 * read at every call, which keeps it from being inlined on the per-call path.
 */
const headerOf = entryHeader;
const messageOf = entryMessage;

/**
 * The member's entry point for the grain calls of one hosted kind: registered in the actor
 * system's registry for the id prefix `$g/<kind>/` (`grainPrefixOf`), so every call to a grain
 * of the kind on this member, sent from this member or from another one, arrives in `post` with
 * the grain's PID `$g/<kind>/<identity>` (a local caller's PID caches the router, like an
 * actor's). Not an actor: routing is synchronous, so nothing needs a mailbox here, and the
 * call's entry goes on unchanged into the activation's mailbox.
 *
 * It answers, without touching any grain: NotOwnerError while the shard is drained for its
 * release, and DeadlockError when the call chain already waits on the target. Everything else
 * goes to the kind's activator (which refuses what the member's load does not admit); whether this member serves the shard is checked once, where
 * the message is handled (the activation's turn, or the activator before a new activation). A
 * call for a kind this member does not host finds no router: a dead letter, which the caller
 * retries (it only routes to members whose topology entry lists the kind).
 */
export class GrainRouter implements LocalProcess {
  /** Set when the member closes: PIDs that cached the router look it up again (and miss). */
  dead = false;
  /** The router never refuses: a full grain mailbox is answered with OverloadedError. */
  readonly capacity = Infinity;
  private readonly prefixLength: number;

  constructor(
    private readonly activator: Activator,
    /** The kind's grain id prefix, `$g/<kind>/`. */
    readonly prefix: string,
    /** The registry the router is added to (a local caller's PID caches it). */
    readonly owner: ProcessRegistry,
  ) {
    this.prefixLength = prefix.length;
  }

  /** A call to the grain `pid` names: its identity is read in place from `prefixLength` on. */
  post(pid: PID, entry: Entry): boolean {
    const id = pid.id;
    const activator = this.activator;
    const from = this.prefixLength;
    // shardOf without its argument check (kind() validated shardCount); the table reuses it.
    const hash = fnv1a32(id, from);
    const shard = hash % activator.shardCount;
    if (activator.draining[shard]) {
      activator.notOwner(entrySender(entry), id.slice(from), shard);
      return true;
    }
    const h = headerOf(entry);
    if (h === undefined) {
      activator.deliver(id, from, shard, hash, entry, false, false);
      return true;
    }
    const deadlock = deadlockOf(activator.def, id, from, h, messageOf(entry));
    if (deadlock !== undefined) {
      activator.services.reply(entrySender(entry), deadlock);
      return true;
    }
    activator.deliver(id, from, shard, hash, entry, h[H_ACK] === '1', h[H_CHAIN] !== undefined);
    return true;
  }

  sendSystemMessage(): void {}

  stop(): void {}
}
