import { PID } from '@granary/core';
import type { Topology } from '../../membership/topology';
import { grainIdOf } from './call-headers';

/**
 * Grain references a caller keeps (Orleans' GrainReference, Proto.Actor's PID cache): one per
 * 10,000 grains it calls is ~2 MB at most, and clearing when full keeps departed grains and
 * members from piling up (a cleared reference is made again on the next call).
 */
const MAX_GRAIN_REFS = 10_000;

/**
 * What a caller keeps per grain: its shard (hashed once), and under one topology its owner's
 * address and its PID there, so a call to a known grain hashes nothing, looks up no owner and
 * builds no string.
 */
export class GrainRef {
  /** The topology `address` and `pid` were resolved under. */
  topology: Topology | undefined = undefined;
  /** The owner under `topology`; undefined while no up member hosts the kind. */
  address: string | undefined = undefined;
  private pidAtOwner: PID | undefined = undefined;

  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly shard: number,
  ) {}

  /** The grain's PID at `address` (made once for the owner, on the fly for a hint). */
  pidAt(address: string): PID {
    if (address !== this.address) return new PID(address, grainIdOf(this.kind, this.identity));
    return (this.pidAtOwner ??= new PID(address, grainIdOf(this.kind, this.identity)));
  }

  /** Resolves the owner again under `topology`. */
  resolve(topology: Topology, address: string | undefined): void {
    this.topology = topology;
    if (address !== this.address) this.pidAtOwner = undefined;
    this.address = address;
  }
}

/** The references of one caller, by kind and identity (bounded by MAX_GRAIN_REFS in all). */
export class GrainRefs {
  private readonly byKind = new Map<string, Map<string, GrainRef>>();
  private size = 0;
  private lastKind: string | undefined = undefined;
  private lastRefs: Map<string, GrainRef> | undefined = undefined;

  /** The reference of `kind/identity`, if held. */
  get(kind: string, identity: string): GrainRef | undefined {
    if (kind === this.lastKind) return this.lastRefs!.get(identity);
    const refs = this.byKind.get(kind);
    if (refs === undefined) return undefined; // no map for a kind never added (it may be unknown)
    this.lastKind = kind;
    this.lastRefs = refs;
    return refs.get(identity);
  }

  /**
   * The topology changed: every reference resolves its owner again on its next call, and none
   * keeps an old topology (and the rings cached for it) alive meanwhile.
   */
  topologyChanged(): void {
    for (const refs of this.byKind.values())
      for (const ref of refs.values()) ref.topology = undefined;
  }

  /** Holds a new reference of `kind/identity` with its shard. */
  add(kind: string, identity: string, shard: number): GrainRef {
    const ref = new GrainRef(kind, identity, shard);
    if (this.size >= MAX_GRAIN_REFS) {
      this.byKind.clear(); // kinds go too: a caller may pass any string as a kind
      this.lastKind = this.lastRefs = undefined;
      this.size = 0;
    }
    let refs = this.byKind.get(kind);
    if (refs === undefined) this.byKind.set(kind, (refs = new Map()));
    refs.set(identity, ref);
    this.size++;
    return ref;
  }
}
