import { reportOf, type HealthCheck, type HealthReport } from './health';

/** Where a member is in its life: what `/startupz` and `/readyz` read first. */
export type MemberState = 'starting' | 'running' | 'stopping' | 'stopped';

/** What readiness reads of the member's shard ownership (its lease). */
export interface LeaseView {
  readonly fenced: boolean;
  leaseValid(): boolean;
}

/**
 * The member's `/startupz` and `/readyz` answers: its own checks (joined, lease, load shedding)
 * and the readiness checks the application added (Cluster.addReadinessCheck).
 */
export class ReadinessChecks {
  private readonly checks = new Map<string, HealthCheck>();

  /** Adds a named check; the returned function removes it. */
  add(name: string, check: HealthCheck): () => void {
    this.checks.set(name, check);
    return () => this.checks.delete(name);
  }

  /** `/startupz`: healthy once the member has joined. */
  startup(state: MemberState): HealthReport {
    return reportOf({ member: state === 'starting' ? 'joining' : undefined });
  }

  /**
   * `/readyz`: healthy while the member is joined and running, its lease provably alive, and
   * no readiness check objects (see Cluster.readiness).
   */
  readiness(
    state: MemberState,
    lease: LeaseView,
    load: { readonly shedding: boolean },
  ): HealthReport {
    const checks: Record<string, string | undefined> = {
      member:
        state === 'running'
          ? undefined
          : state === 'starting'
            ? 'joining'
            : state === 'stopping'
              ? 'leaving'
              : 'stopped',
      lease:
        state !== 'running'
          ? undefined
          : lease.fenced
            ? 'fenced: lease lost, re-registering'
            : lease.leaseValid()
              ? undefined
              : 'lease not provably alive',
      // Shedding: it refuses new calls and activations early (docs/overload.md).
      overload: load.shedding
        ? 'shedding load: run-queue delay above what the calls admitted allow (loadShedding)'
        : undefined,
    };
    for (const [name, check] of this.checks) {
      try {
        checks[name] = check();
      } catch (err) {
        checks[name] = `check threw: ${(err as Error).message}`;
      }
    }
    return reportOf(checks);
  }
}
