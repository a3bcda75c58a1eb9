import { EMPTY_TOPOLOGY, type Topology } from '../membership/topology';
import type { TopologySnapshot } from '../membership/topology-service';

/**
 * Answers from other members below the topology in use that make it an outlier's: two, from
 * two members (one when only one other member is asked). Members see a change within
 * milliseconds of each other and a client asks one member per `topologyRefreshMs`, so two
 * lower answers in a row are no lag: the higher view came from a member alone in it.
 */
const OUTVOTING_MEMBERS = 2;

/** What {@link GatewayAnswers.take} did with an answer. */
export type AnswerOutcome = 'taken' | 'kept' | 'ignored';

/**
 * Which of the topologies members answer a gateway client uses. Versions grow across the
 * cluster, so a higher version is taken at once. But a version is only what the answering
 * member says: one member (hostile, or buggy) answering 2^53-1 pinned the client before, every
 * later real topology being "older". So a view no other member confirms is dropped once
 * {@link OUTVOTING_MEMBERS} others answer below it, and its member is an outlier: its answers
 * above the topology in use are ignored until it answers one at or below it again.
 *
 * ```
 *   higher version ──────────────────────────────► taken (its member is the source)
 *   same version from another member ─────────────► kept, confirmed
 *   lower, from the source itself ────────────────► taken (its own view went back)
 *   lower, from others, OUTVOTING_MEMBERS of them ► taken; the source becomes an outlier
 *   above the topology in use, from an outlier ───► ignored
 * ```
 */
export class GatewayAnswers {
  private current: Topology = EMPTY_TOPOLOGY;
  /** The member whose answer `current` is. */
  private source: string | undefined = undefined;
  /** Members that answered below `current` since it was taken, and not confirmed since. */
  private readonly lower = new Set<string>();
  /** Members outvoted; bounded by the addresses a client asks (its gateways and members). */
  private readonly outliers = new Set<string>();

  topology(): Topology {
    return this.current;
  }

  /** True if `address` was outvoted and has not agreed since. */
  isOutlier(address: string): boolean {
    return this.outliers.has(address);
  }

  /**
   * One member's well-formed answer. `asked` are the members the client asks in turn (the
   * outvote needs at most as many as there are besides the source; outliers not among them
   * are forgotten).
   */
  take(address: string, snapshot: TopologySnapshot, asked: ReadonlySet<string>): AnswerOutcome {
    for (const a of this.outliers) if (!asked.has(a)) this.outliers.delete(a);
    const others = asked.size - (this.source !== undefined && asked.has(this.source) ? 1 : 0);
    const v = snapshot.version;
    if (this.outliers.has(address)) {
      if (v > this.current.version) return 'ignored';
      this.outliers.delete(address);
    }
    if (v > this.current.version || this.current === EMPTY_TOPOLOGY)
      return this.use(address, snapshot);
    if (v === this.current.version) {
      if (address !== this.source) this.lower.clear();
      return 'kept';
    }
    if (address === this.source) return this.use(address, snapshot);
    this.lower.add(address);
    if (this.lower.size < Math.max(1, Math.min(OUTVOTING_MEMBERS, others))) return 'kept';
    // Outvoted by one member only (a client of two members) says nothing of who is right:
    // the client moves to the lower view and back at the next higher answer, pinned to neither.
    if (this.lower.size >= OUTVOTING_MEMBERS && this.source !== undefined)
      this.outliers.add(this.source);
    return this.use(address, snapshot);
  }

  private use(address: string, snapshot: TopologySnapshot): AnswerOutcome {
    this.current = Object.freeze({ version: snapshot.version, members: snapshot.members });
    this.source = address;
    this.lower.clear();
    return 'taken';
  }
}
