import type { ClusterLogger } from '../../internal/logger';
import type { StateLostPolicy } from '../durability';
import type { StateLostError } from '../errors';

/**
 * Grains whose last acknowledged version the store remembers (about 100 bytes each, so ~10 MB
 * at the cap). Past it the least recently used are forgotten: a grain this busy member has not
 * touched for that long is mostly hosted elsewhere, where its activation still detects a loss.
 */
const REMEMBERED_VERSIONS = 100_000;
/** Lost grains logged one by one; past this many, one line says further ones are only counted. */
const LOGGED_GRAINS = 10_000;

/** What a store counted about lost state since it was created. */
export interface StateLossCounts {
  /** Grains found holding older state than acknowledged (each counted once per store). */
  lostGrains: number;
  /** Times the store found its identity marker gone or changed (the whole store lost data). */
  lostStores: number;
  /** Calls that failed with StateLostError (every refusal, detected or marked). */
  refusedCalls: number;
  /** Lost grains carried on by the kind's `'accept'` policy or by acceptStateLoss(). */
  acceptedGrains: number;
}

/**
 * The store's memory of lost state: the newest version acknowledged per grain key (written or
 * read by this store instance), the per-kind policy, and the error log and counts, each lost
 * grain logged once at error level.
 *
 * Remembered versions let a read catch a regression its activation could not: a grain that
 * passivated after its last write and is activated again here after a failover to a replica
 * that missed that write.
 */
export class LossLedger {
  readonly counts: StateLossCounts = {
    lostGrains: 0,
    lostStores: 0,
    refusedCalls: 0,
    acceptedGrains: 0,
  };
  private readonly versions = new Map<string, number>();
  private readonly logged = new Set<string>();

  constructor(
    private readonly policies: Readonly<Record<string, StateLostPolicy>>,
    private readonly logger: ClusterLogger,
  ) {}

  /** The kind's policy (`'refuse'` unless the kind is listed as `'accept'`). */
  policyOf(kind: string): StateLostPolicy {
    return this.policies[kind] === 'accept' ? 'accept' : 'refuse';
  }

  /** Remembers that `version` of `key` was acknowledged (stored or loaded). */
  remember(key: string, version: number): void {
    const versions = this.versions;
    // delete + set moves the key to the end: the Map's order is least recently used first.
    versions.delete(key);
    versions.set(key, version);
    if (versions.size > REMEMBERED_VERSIONS) {
      versions.delete(versions.keys().next().value as string);
    }
  }

  /** The newest acknowledged version of `key` this store remembers, if any. */
  seen(key: string): number | undefined {
    return this.versions.get(key);
  }

  /** Drops what is remembered of `key` (its tombstone may expire: a later absence is no loss). */
  forget(key: string): void {
    this.versions.delete(key);
  }

  /**
   * Counts a refusal; logs and counts the grain the first time it is seen lost. `accepted`
   * says the policy let the grain carry on.
   */
  report(err: StateLostError, key: string, accepted: boolean): void {
    this.counts.refusedCalls++;
    if (accepted) this.counts.acceptedGrains++;
    if (this.logged.has(key)) return;
    this.counts.lostGrains++;
    if (this.logged.size >= LOGGED_GRAINS) return;
    this.logged.add(key);
    const { kind, id, seenVersion, foundVersion, evidence } = err;
    this.logger.error(
      { kind, id, seenVersion, foundVersion, evidence, policy: this.policyOf(kind), err },
      this.logged.size === LOGGED_GRAINS
        ? 'grain state lost (further lost grains are counted, not logged)'
        : accepted
          ? "grain state lost; the kind's stateLostPolicy 'accept' carries on from the older state"
          : 'grain state lost; the grain is refused until an operator calls acceptStateLoss',
    );
  }

  /** Counts and logs (once per loss) that the whole store lost its data. */
  reportStore(detail: Record<string, unknown>): void {
    this.counts.lostStores++;
    this.logger.error(
      detail,
      'state store lost its data (identity marker gone or changed): grains of kinds that refuse are refused until an operator calls acceptStateLoss',
    );
  }

  /** After an operator accepted a loss, the grain may be reported again if it is lost again. */
  cleared(key: string): void {
    this.logged.delete(key);
  }
}
