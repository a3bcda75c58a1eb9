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
import { H_ACK, H_CALL, H_PATH, pathOf } from './internal/call-headers';
import { control } from './internal/control-replies';
import type { GrainHost } from './internal/grain-host';
import type { KindSlot } from './internal/kind-slot';

/** Well-known id of every member's grain router: calls go to `address/$grains`. */
export const ROUTER_ID = '$grains';

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
  /** The kinds this member hosts (a member hosts a few: scanned by name, no string per call). */
  readonly slots: readonly KindSlot[];
  /** A message to the router that is not a grain call. */
  deadLetter(message: unknown, sender: PID | undefined): void;
}

/**
 * The member's entry point for grain calls (a core LocalProcess, not an actor: routing is
 * synchronous, so nothing needs a mailbox here; a local call's PID caches it, so a call from
 * this member posts its lane entry straight here, and the entry goes on unchanged into the
 * activation's mailbox). It answers, without touching any grain: unknown kind, NotOwner (with
 * the owner it believes in) when this member does not hold the shard or drains it, and
 * DeadlockError when the call chain already waits on the target. Everything else goes to the
 * activator.
 */
export class GrainRouter implements LocalProcess {
  dead = false;
  readonly capacity = Infinity;

  constructor(private readonly deps: RouterDeps) {}

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
    this.route(laneEntry(envelope.message, envelope.sender, envelope.header));
  }

  sendSystemMessage(): void {}

  stop(): void {}

  private route(entry: unknown): void {
    const h = headerOf(entry);
    // `<deadline>/<kind>/<identity>`: a kind never holds '/', an identity may.
    const v = h?.[H_CALL];
    const a = v === undefined ? -1 : v.indexOf('/');
    const b = a < 0 ? -1 : v!.indexOf('/', a + 1);
    if (b < 0) return this.deps.deadLetter(messageOf(entry), entrySender(entry));
    const slot = this.slotAt(v!, a + 1, b);
    const host = this.deps.host;
    if (slot === undefined) return host.reply(entrySender(entry), control({ c: 'unknown-kind' }));
    const identity = v!.slice(b + 1);
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

  /** The hosted kind named by `v[from, to)`, if any. */
  private slotAt(v: string, from: number, to: number): KindSlot | undefined {
    const kinds = this.deps.slots;
    const len = to - from;
    for (let i = 0; i < kinds.length; i++) {
      const s = kinds[i]!;
      const name = s.def.name;
      if (name.length === len && v.startsWith(name, from)) return s;
    }
    return undefined;
  }
}
