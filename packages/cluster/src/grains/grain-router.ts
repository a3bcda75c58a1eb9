import type { PID } from '@granary/core';
import {
  entryHeader,
  entryMessage,
  entrySender,
  type Entry,
  type LocalProcess,
  type Process,
  type ProcessRegistry,
} from '@granary/core/internal';
import { fnv1a32 } from '../placement/shard-of';
import type { Activator } from './activator';
import { H_ACK, H_IDENTITY, H_PATH, grainPrefixOf, pathOf } from './internal/call-headers';
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
 * The member's entry point for the grain calls of one hosted kind (not an actor: routing is
 * synchronous, so nothing needs a mailbox here). Two faces:
 * - a core LocalProcess registered as `routerIdOf(kind)`: a call from this member posts its
 *   lane entry straight here (a local call's PID caches it) with the identity in the `g`
 *   header, and the entry goes on unchanged into the activation's mailbox;
 * - `byGrainId`, registered for the prefix `grainPrefixOf(kind)`: a call from another member is
 *   addressed to the grain's own id, and the identity is the rest of that id.
 * It answers, without touching any grain: NotOwner (with the owner it believes in) when this
 * member does not hold the shard or drains it, and DeadlockError when the call chain already
 * waits on the target. Everything else goes to the activator. A call to a kind this member does
 * not host finds no router: a dead letter, which the caller retries (it only routes to members
 * whose topology entry lists the kind).
 */
export class GrainRouter implements LocalProcess {
  dead = false;
  readonly capacity = Infinity;
  /** The prefix route of the kind's grain ids (a plain Process: never cached on a PID). */
  readonly byGrainId: Process;
  private readonly prefixLength: number;

  constructor(
    private readonly deps: RouterDeps,
    private readonly slot: KindSlot,
  ) {
    this.prefixLength = grainPrefixOf(slot.def.name).length;
    this.byGrainId = {
      post: (pid, entry) => {
        this.route(entry, pid.id.slice(this.prefixLength));
        return true;
      },
      sendSystemMessage: () => {},
      stop: () => {},
    };
  }

  get owner(): ProcessRegistry {
    return this.deps.registry;
  }

  /** A local call (or any send to the router's own id): the identity is in the `g` header. */
  post(_pid: PID, entry: Entry): boolean {
    this.route(entry, headerOf(entry)?.[H_IDENTITY]);
    return true;
  }

  sendSystemMessage(): void {}

  stop(): void {}

  private route(entry: Entry, identity: string | undefined): void {
    if (identity === undefined) return this.deps.deadLetter(messageOf(entry), entrySender(entry));
    const slot = this.slot;
    const host = this.deps.host;
    // shardOf without its argument check (kind() validated shardCount); the activator reuses it.
    const hash = fnv1a32(identity);
    const shard = hash % slot.shardCount;
    if (slot.draining[shard] || !host.canServe(slot.def.name, shard)) {
      return host.replyNotOwner(entrySender(entry), slot.def.name, shard);
    }
    const h = headerOf(entry);
    if (h?.[H_PATH] !== undefined) {
      const path = pathOf(h);
      const self = `${slot.def.name}/${identity}`;
      if (path.includes(self) && !slot.def.reentrant(messageOf(entry))) {
        return host.reply(entrySender(entry), control({ c: 'deadlock', chain: [...path, self] }));
      }
    }
    this.deps.activator.deliver(slot, identity, shard, hash, entry, h?.[H_ACK] === '1');
  }
}
