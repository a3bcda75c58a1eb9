import type {
  ClaimReleased,
  ClaimResult,
  ClusterProvider,
  JoinRequest,
  LeaseHealth,
  Member,
  Topology,
} from '@granary/cluster';

/**
 * A ClusterProvider over a synthetic membership, for the placement benchmark: the topology is
 * whatever the benchmark sets (thousands of members that exist only as entries), and every claim
 * of the one real member is granted at once. What the real member does with a membership change
 * (placement, the pass over its ranges, claims, releases, events) is the production code path.
 */
export class SyntheticProvider implements ClusterProvider {
  private current: Topology = { version: 0, members: [] };
  private readonly listeners = new Set<(t: Topology) => void>();
  private revision = 0;
  private self: Member | undefined;

  constructor(private readonly others: Member[]) {}

  async join(self: JoinRequest): Promise<void> {
    this.self = {
      id: self.id,
      address: self.address,
      kinds: self.kinds,
      kindShards: self.kindShards,
      status: 'up',
      incarnation: 1,
    };
    this.publish(this.others);
  }

  /** Replaces the other members (a membership change) and tells the real member. */
  setOthers(others: Member[]): void {
    this.publish(others);
  }

  private publish(others: Member[]): void {
    const members = [...others, this.self!].sort((a, b) => (a.id < b.id ? -1 : 1));
    this.current = { version: this.current.version + 1, members };
    for (const l of this.listeners) l(this.current);
  }

  async markLeaving(): Promise<void> {}
  async leave(): Promise<void> {}
  topology(): Topology {
    return this.current;
  }
  onTopology(listener: (t: Topology) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async claim(): Promise<ClaimResult> {
    return { epoch: ++this.revision };
  }
  async release(): Promise<void> {}
  onClaimReleased(_listener: (e: ClaimReleased) => void): () => void {
    return () => undefined;
  }
  onLeaseHealth(_listener: (e: LeaseHealth) => void): () => void {
    return () => undefined;
  }
  leaseValid(): boolean {
    return true;
  }
}
