/**
 * One health check: undefined while healthy, else why not (a short sentence). Readiness checks
 * added with `Cluster.addReadinessCheck` (load shedding, a dependency of the application) run on
 * every `/readyz`.
 */
export type HealthCheck = () => string | undefined;

/** A probe's answer: healthy or not, and each check's result ('ok' or why not). */
export interface HealthReport {
  readonly ok: boolean;
  readonly checks: Readonly<Record<string, string>>;
}

/** What the ops server asks the member for `/startupz` and `/readyz`. */
export interface HealthSource {
  /** Healthy once the member has joined (and from then on). */
  startup(): HealthReport;
  /** Healthy while the member is joined, its lease valid and it is not leaving or shedding. */
  readiness(): HealthReport;
}

/** A report from named checks (each undefined when healthy). */
export function reportOf(checks: Record<string, string | undefined>): HealthReport {
  const out: Record<string, string> = {};
  let ok = true;
  for (const [name, why] of Object.entries(checks)) {
    out[name] = why ?? 'ok';
    if (why !== undefined) ok = false;
  }
  return { ok, checks: out };
}
