import type { MessageEnvelope, PID, Process } from '@granary/core';
import { shardOf } from '../placement/shard-of';
import type { Activator } from './activator';
import { H_ACK, H_PATH, pathOf, replyToOf, targetOf } from './internal/call-headers';
import { control } from './internal/control-replies';
import type { GrainHost } from './internal/grain-host';
import type { KindSlot } from './internal/kind-slot';

/** Well-known id of every member's grain router: calls go to `address/$grains`. */
export const ROUTER_ID = '$grains';

/** What the router looks up in the runtime. */
export interface RouterDeps {
  readonly host: GrainHost;
  readonly activator: Activator;
  slot(kind: string): KindSlot | undefined;
  deadLetter(pid: PID, envelope: MessageEnvelope, reason: string): void;
}

/**
 * The member's entry point for grain calls (a plain process, not an actor: routing is
 * synchronous, so nothing needs a mailbox here). It answers, without touching any grain:
 * unknown kind, NotOwner (with the owner it believes in) when this member does not hold the
 * shard or drains it, and DeadlockError when the call chain already waits on the target.
 * Everything else goes to the activator.
 */
export class GrainRouter implements Process {
  constructor(private readonly deps: RouterDeps) {}

  sendUserMessage(pid: PID, envelope: MessageEnvelope): void {
    const h = envelope.header;
    const target = targetOf(h);
    if (h === undefined || target === undefined) {
      return this.deps.deadLetter(pid, envelope, 'not-a-grain-call');
    }
    const { kind, identity } = target;
    const host = this.deps.host;
    const sender = envelope.sender;
    const slot = this.deps.slot(kind);
    if (slot === undefined) return host.reply(sender, control({ c: 'unknown-kind' }));
    const shard = shardOf(identity, slot.shardCount);
    if (slot.draining[shard] || !host.canServe(kind, shard)) {
      return host.replyNotOwner(sender, kind, shard);
    }
    if (h[H_PATH] !== undefined) {
      const path = pathOf(h);
      const self = `${kind}/${identity}`;
      if (path.includes(self) && !slot.def.reentrant(envelope.message)) {
        return host.reply(sender, control({ c: 'deadlock', chain: [...path, self] }));
      }
    }
    this.deps.activator.deliver(slot, identity, shard, {
      message: envelope.message,
      sender,
      header: h,
      ack: h[H_ACK] === '1',
      replyTo: replyToOf(h),
    });
  }

  sendSystemMessage(): void {}

  stop(): void {}
}
