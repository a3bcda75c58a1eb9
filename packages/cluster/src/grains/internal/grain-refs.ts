import { PID, type ActorSystem } from '@granary/core';
import type { LocalProcess, PeerSilence, Process } from '@granary/core/internal';
import type { Topology } from '../../membership/topology';
import type { OwnerThrottle } from '../../overload/owner-throttle';
import { grainIdOf, grainPrefixOf } from './call-headers';

/**
 * Grain references a caller keeps (Orleans' GrainReference, Proto.Actor's PID cache): one per
 * 10,000 grains it calls is ~2 MB at most, and clearing when full keeps departed grains and
 * members from piling up (a cleared reference is made again on the next call).
 */
const MAX_GRAIN_REFS = 10_000;

/** Core's PID class, read once (a CommonJS re-export is a getter per read; one PID per call). */
const PIDClass = PID;

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
  /** The caller's throttle of that owner (see OwnerThrottle). */
  throttle: OwnerThrottle | undefined = undefined;
  /** Whether that owner reads what its link carries (core's PeerSilence; none for this node). */
  silence: PeerSilence | undefined = undefined;
  private pidAtOwner: PID | undefined = undefined;
  /** A PID was made for the owner once already: the next one is kept. */
  private calledBefore = false;

  constructor(
    readonly kind: string,
    readonly identity: string,
    readonly shard: number,
  ) {}

  /**
   * The grain's PID at `address` (kept for the owner from the second call on, made on the fly
   * for a hint); on this member, with the kind's router cached on it (`routes`). A grain called
   * once (a new identity per call) keeps no PID: its PID and id string die young instead of
   * being promoted with the reference and dropped later (local activations 1.06x,
   * grains-activation; docs/performance-notes.md).
   */
  pidAt(address: string, routes: LocalRoutes): PID {
    if (address === this.address && this.pidAtOwner !== undefined) return this.pidAtOwner;
    const pid = routes.cached(
      this.kind,
      new PIDClass(address, grainIdOf(this.kind, this.identity)),
    );
    if (address === this.address) {
      if (this.calledBefore) this.pidAtOwner = pid;
      else this.calledBefore = true;
    }
    return pid;
  }

  /** Resolves the owner again under `topology`, with the caller's throttle and view of it. */
  resolve(
    topology: Topology,
    address: string | undefined,
    throttle: OwnerThrottle | undefined,
    silence: PeerSilence | undefined = undefined,
  ): void {
    this.topology = topology;
    if (address !== this.address) this.pidAtOwner = undefined;
    this.address = address;
    this.throttle = throttle;
    this.silence = silence;
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

/**
 * The routers of the kinds this member hosts, as the registry resolves them, cached on the PIDs
 * a caller makes for grains on this member. Without it each new identity's first local call
 * paid the registry's map miss (a fresh id string hashed against every live actor's) and prefix
 * scan: local activations ran at ~0.85x of the commit before the one addressing scheme
 * (grains-activation, docs/performance-notes.md). Every id under a hosted kind's prefix is its
 * router's (HostedGrains registers it), so the router found once serves the whole kind.
 */
export class LocalRoutes {
  private readonly byKind = new Map<string, Process>();

  constructor(private readonly system: ActorSystem) {}

  /** `pid`, with its kind's router cached on it when it names a grain on this member. */
  cached(kind: string, pid: PID): PID {
    if (pid.address !== this.system.address) return pid;
    const registry = this.system.registry;
    let route = this.byKind.get(kind);
    if (route === undefined || (route as LocalProcess).dead) {
      const found = registry.getLocal(pid.id);
      // The kind's router only (not an actor someone registered under this very id).
      if (found === undefined || (found as { prefix?: string }).prefix !== grainPrefixOf(kind)) {
        return pid;
      }
      this.byKind.set(kind, (route = found));
    }
    registry.cacheRoute(pid, route);
    return pid;
  }
}
