import {
  entryHeader,
  entryMessage,
  entrySender,
  laneEntry,
  type LocalProcess,
  type MessageEnvelope,
  type PID,
  type ProcessRegistry,
} from '@granary/core';
import { fnv1a32 } from '../placement/shard-of';
import type { Activator } from './activator';
import { H_ACK, H_IDENTITY, H_PATH, pathOf } from './internal/call-headers';
import { control } from './internal/control-replies';
import type { GrainHost } from './internal/grain-host';
import type { KindSlot } from './internal/kind-slot';

/**
 * Module-level aliases of core's entry helpers: a CommonJS import is a getter on core's exports
 * read at every call, which keeps it from being inlined on the per-call path.
 */
const headerOf = entryHeader;
const messageOf = entryMessage;

/** What the router looks up in the runtime. */
export interface RouterDeps {
  readonly host: GrainHost;
  readonly activator: Activator;
  /** The registry the router is added to (a local call's PID caches the router). */
  readonly registry: ProcessRegistry;
  /** A message to a router that is not a grain call. */
  deadLetter(message: unknown, sender: PID | undefined): void;
}

/**
 * The member's entry point for the grain calls of one hosted kind, registered as
 * `routerIdOf(kind)` (a core LocalProcess, not an actor: routing is synchronous, so nothing
 * needs a mailbox here; a local call's PID caches it, so a call from this member posts its lane
 * entry straight here, and the entry goes on unchanged into the activation's mailbox). The kind
 * is in the target id, which a batch sends once (its table of target ids), so a call carries
 * only the identity and the deadline as headers. It answers, without touching any grain:
 * NotOwner (with the owner it believes in) when this member does not hold the shard or drains
 * it, and DeadlockError when the call chain already waits on the target. Everything else goes
 * to the activator. A call to a kind this member does not host finds no router: a dead letter,
 * which the caller retries (it only routes to members whose topology entry lists the kind).
 */
export class GrainRouter implements LocalProcess {
  dead = false;
  readonly capacity = Infinity;

  constructor(
    private readonly deps: RouterDeps,
    private readonly slot: KindSlot,
  ) {}

  get owner(): ProcessRegistry {
    return this.deps.registry;
  }

  /** A local call (or any local send to the router). Never refuses. */
  post(entry: unknown): boolean {
    this.route(entry);
    return true;
  }

  /** The registry path: calls arriving from other members. */
  sendUserMessage(_pid: PID, envelope: MessageEnvelope): void {
    this.route(laneEntry(envelope.message, envelope.sender, envelope.header, envelope.deadline));
  }

  sendSystemMessage(): void {}

  stop(): void {}

  private route(entry: unknown): void {
    const h = headerOf(entry);
    const identity = h?.[H_IDENTITY];
    if (identity === undefined) return this.deps.deadLetter(messageOf(entry), entrySender(entry));
    const slot = this.slot;
    const host = this.deps.host;
    // shardOf without its argument check (kind() validated shardCount); the activator reuses it.
    const hash = fnv1a32(identity);
    const shard = hash % slot.shardCount;
    if (slot.draining[shard] || !host.canServe(slot.def.name, shard)) {
      return host.replyNotOwner(entrySender(entry), slot.def.name, shard);
    }
    if (h![H_PATH] !== undefined) {
      const path = pathOf(h);
      const self = `${slot.def.name}/${identity}`;
      if (path.includes(self) && !slot.def.reentrant(messageOf(entry))) {
        return host.reply(entrySender(entry), control({ c: 'deadlock', chain: [...path, self] }));
      }
    }
    this.deps.activator.deliver(slot, identity, shard, hash, entry, h![H_ACK] === '1');
  }
}
