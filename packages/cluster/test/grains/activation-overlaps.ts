import type { ActivationEvent } from '../../src/grains/grains-options';

/** One activation's lifetime in the log: from its `activate` to its `deactivate`. */
interface Interval {
  activationId: string;
  member: string;
  /** `at` of its activate line (-Infinity if the log lacks it: it may have run all along). */
  from: number;
  /** `at` of its deactivate line (Infinity while it has not ended). */
  to: number;
}

/**
 * The overlapping activations of each identity in an activation log, as
 * `kind/id: <activationId> on <member> while <activationId> on <member>` (empty: none overlap).
 *
 * Each activation is an interval [activate.at, deactivate.at], paired by activation id, so an
 * activation that starts and ends in the same millisecond is still one interval (sorting the
 * bare events by time and putting deactivations first on a tie, as an earlier version did, read
 * such a pair as "ended, then started again, never ended" and reported it overlapping the next
 * activation). Two activations overlap when one starts before the other ended; an end and a start
 * in the same millisecond cannot be ordered by `Date.now()` and do not count.
 */
export function overlaps(log: readonly ActivationEvent[]): string[] {
  const byIdentity = new Map<string, Map<string, Interval>>();
  for (const e of log) {
    const key = `${e.kind}/${e.identity}`;
    let activations = byIdentity.get(key);
    if (activations === undefined) byIdentity.set(key, (activations = new Map()));
    let i = activations.get(e.activationId);
    if (i === undefined) {
      i = { activationId: e.activationId, member: e.member, from: -Infinity, to: Infinity };
      activations.set(e.activationId, i);
    }
    if (e.type === 'activate') i.from = e.at;
    else i.to = e.at;
  }
  const bad: string[] = [];
  for (const [key, activations] of byIdentity) {
    const sorted = [...activations.values()].sort((a, b) => a.from - b.from || a.to - b.to);
    // The activation that ends last among those started so far: each next one must start after.
    let last: Interval | undefined;
    for (const i of sorted) {
      if (last !== undefined && i.from < last.to) {
        bad.push(
          `${key}: ${i.activationId} on ${i.member} while ${last.activationId} on ${last.member}`,
        );
      }
      if (last === undefined || i.to > last.to) last = i;
    }
  }
  return bad;
}

/**
 * A failure message for `overlaps(log)`: every overlap, then the whole activation log of each
 * identity involved (at, type, activation id, member, reason) in time order, then `context`
 * (e.g. how each node process exited), so one failed run shows whether it was a real double
 * activation.
 */
export function overlapReport(log: readonly ActivationEvent[], context: string[] = []): string {
  const bad = overlaps(log);
  if (bad.length === 0) return 'no overlapping activations';
  const keys = new Set(bad.map((b) => b.slice(0, b.indexOf(': '))));
  const lines = [`${bad.length} overlapping activation(s):`, ...bad.map((b) => `  ${b}`)];
  for (const key of keys) {
    lines.push(`activation log of ${key}:`);
    const mine = log.filter((x) => `${x.kind}/${x.identity}` === key);
    for (const e of mine.sort((a, b) => a.at - b.at)) {
      const reason = e.reason === undefined ? '' : ` (${e.reason})`;
      lines.push(`  ${e.at} ${e.type} ${e.activationId} on ${e.member}${reason}`);
    }
  }
  return [...lines, ...context].join('\n');
}
