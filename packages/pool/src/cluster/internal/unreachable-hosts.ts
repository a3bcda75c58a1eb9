import { EndpointConnectedEvent, EndpointTerminatedEvent, type ActorSystem } from '@granary/core';
import type { Topology } from '@granary/cluster';

/**
 * How long a broken link keeps a member's workers skipped. Longer than the default lease TTL
 * (etcd 5 s, seed 3 s), so a member that died leaves the topology before its mark ends; bounded,
 * because a live member whose link broke for a moment is dialled again only when something sends
 * to it, and the pool must not leave its workers idle for ever.
 */
export const UNREACHABLE_MARK_MS = 10_000;

const NONE: ReadonlySet<string> = new Set();

/**
 * The members whose link this process saw break or fail to connect, until one connects again or
 * UNREACHABLE_MARK_MS passes. A member that died stays in the topology until its lease expires
 * (seconds); meanwhile a call to one of its workers waited out its whole deadline (the worker's
 * kind has no other host), though the pool's other workers were free. The pool client skips
 * these members' workers, and asks them for no inventory, while any other worker can take it.
 */
export class UnreachableHosts {
  /** Address (`host:port`) → monotonic ms it was marked. */
  private readonly down = new Map<string, number>();

  constructor(private readonly system: ActorSystem | undefined) {
    if (system === undefined) return;
    system.eventStream.subscribe(EndpointTerminatedEvent, (e) =>
      this.down.set(e.address, system.clock.monotonic()),
    );
    system.eventStream.subscribe(EndpointConnectedEvent, (e) => this.down.delete(e.address));
  }

  /** Ids of the members of `topology` that are unreachable now. */
  ids(topology: Topology): ReadonlySet<string> {
    if (this.down.size === 0) return NONE;
    const now = this.system!.clock.monotonic();
    const ids = new Set<string>();
    const present = new Set<string>();
    for (const m of topology.members) {
      present.add(m.address);
      const since = this.down.get(m.address);
      if (since !== undefined && now - since < UNREACHABLE_MARK_MS) ids.add(m.id);
    }
    // Expired marks and addresses no member has any more are forgotten: the map stays small.
    for (const [a, since] of this.down) {
      if (!present.has(a) || now - since >= UNREACHABLE_MARK_MS) this.down.delete(a);
    }
    return ids;
  }
}
