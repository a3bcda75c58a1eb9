import { UnknownKindError, type ActorSystem } from '@granary/core';
import type { PeerSilence } from '@granary/core/internal';
import { NoTransportError } from '../../errors';
import type { Topology } from '../../membership/topology';
import type { CallerLoad } from '../../overload/caller-load';
import { ownerOf } from '../../placement/owner-of';
import type { GrainRef } from './grain-refs';
import { KindHosts } from './kind-hosts';

/** What owner lookup needs from the caller's member. */
export interface OwnerLookupDeps {
  readonly system: ActorSystem;
  /** The member's latest topology. */
  topology(): Topology;
  /** No transport to other nodes: an owner elsewhere is NoTransportError. */
  readonly noTransport?: boolean;
}

/**
 * Where a caller's grain lives: the owner of its shard under the member's topology, resolved
 * once per topology and grain reference, and which kinds this member has seen hosted (an
 * unknown kind fails at once; a known kind with no up host retries until its deadline).
 */
export class OwnerLookup {
  /** Which kinds this member has seen hosted, and which of their hosts dropped out. */
  private readonly hosts = new KindHosts();

  constructor(
    private readonly deps: OwnerLookupDeps,
    /** The owners' throttles, attached to a reference with its owner. */
    private readonly load: CallerLoad,
  ) {}

  /**
   * The grain's owner under the current topology (resolved once per topology and grain);
   * undefined while no up member hosts the kind. Throws UnknownKindError, NoTransportError.
   */
  ownerOf(ref: GrainRef): string | undefined {
    const topology = this.deps.topology();
    if (ref.topology !== topology) {
      const address = this.ownerAddress(ref.kind, ref.shard);
      // Without a remote only this node's own grains are reachable (once per topology and grain).
      if (
        this.deps.noTransport === true &&
        address !== undefined &&
        address !== this.deps.system.address
      ) {
        throw new NoTransportError(ref.kind, ref.identity, address);
      }
      ref.resolve(
        topology,
        address,
        address === undefined ? undefined : this.load.throttleOf(address),
        address === undefined ? undefined : this.silenceOf(address),
      );
    }
    return ref.address;
  }

  /** Whether the owner at `address` reads its link (core's PeerSilence); none for this node. */
  silenceOf(address: string): PeerSilence | undefined {
    return this.deps.system.remote?.silenceOf(address);
  }

  /** Whether the member's topology lists a member at `address`. */
  listed(address: string): boolean {
    return this.deps.topology().members.some((m) => m.address === address);
  }

  /** How many of the kind's hosts are leaving or dropped out (NoHostError's details). */
  hostDetails(kind: string): { leaving: number; dropped: number; noMembers: boolean } {
    const topology = this.deps.topology();
    return { ...this.hosts.details(kind, topology), noMembers: topology.members.length === 0 };
  }

  /** The member's topology changed: the hosts seen are updated from it. */
  topologyChanged(): void {
    this.hosts.topologyChanged(this.deps.topology());
  }

  /**
   * The address of the desired owner. Undefined while no up member hosts the kind: its hosts are
   * fenced, leaving, gone or restarting, and the call retries (NoHostError at its deadline).
   * UnknownKindError only for a kind no member has been seen hosting.
   */
  private ownerAddress(kind: string, shard: number): string | undefined {
    const topology = this.deps.topology();
    const owner = ownerOf(kind, shard, topology);
    if (owner !== undefined) return owner.address;
    // An empty view (this member is re-registering) says nothing about the kind: retry.
    if (topology.members.length > 0 && !this.hosts.known(kind, topology)) {
      throw new UnknownKindError(
        kind,
        `unknown grain kind '${kind}': no member has been seen hosting it; register it with kind() in Cluster.start({ kinds })`,
      );
    }
    return undefined;
  }
}
