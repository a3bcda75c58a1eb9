import { expect } from 'chai';
import { AVAILABLE, SLOW_MS, type ChaosReport } from './chaos-checker';
import { CHAOS_DEFAULTS, runChaos, type ChaosRun } from './chaos-run';

/** Issue 17's bound on the whole chaos test. */
const BOUND_MS = 240_000;

/** The figures, as the test prints them (and the note quotes them). */
export function formatChaos(run: ChaosRun): string[] {
  const r: ChaosReport = run.report;
  const lines = [
    `calls ${r.calls}, ok ${r.ok}, failed ${r.calls - r.ok} (${
      Object.entries(r.errors)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }); ${run.seconds.toFixed(0)} s in all`,
    `safety: overlapping activations ${r.overlaps.length}, lost acknowledged ops ${r.lostAcknowledged}, applied twice ${r.appliedTwice}, fenced writes accepted ${r.fencedWritesAccepted}, settled past deadline + 100 ms ${r.late}`,
    `availability per 1 s window (min ${r.minAvailability.toFixed(3)}):`,
  ];
  for (let i = 0; i < r.windows.length; i += 10) {
    lines.push(
      `  ${String(i).padStart(3)} s: ${r.windows
        .slice(i, i + 10)
        .map((w) => w.availability.toFixed(3))
        .join(' ')}`,
    );
  }
  for (const f of r.recovery) {
    lines.push(
      `  ${f.fault}: recovered in ${(f.recoveryMs / 1000).toFixed(1)} s, min availability ${f.minAvailability.toFixed(3)}, slowest call ${(f.slowestMs / 1000).toFixed(1)} s, members fenced: ${f.fenced.length === 0 ? 'none' : f.fenced.join(', ')}`,
    );
    for (const b of f.bad) lines.push(`    ${b}`);
  }
  for (const s of run.skipped) lines.push(`  skipped: ${s}`);
  return lines;
}

describe('chaos: 4 node processes, 3-member etcd, Redis, 100 callers, scheduled faults (issue 17)', function () {
  this.timeout(BOUND_MS);
  let run: ChaosRun;

  before(async () => {
    run = await runChaos({ ...CHAOS_DEFAULTS, log: (line) => console.log(`      ${line}`) });
    for (const line of formatChaos(run)) console.log(`      ${line}`);
  });

  it('no overlapping activations among members that were not fenced', () => {
    expect(run.report.overlaps, run.report.overlaps.slice(0, 5).join('\n')).to.deep.equal([]);
  });

  it('no acknowledged op lost, none applied twice', () => {
    const r = run.report;
    expect(r.lostAcknowledged, r.lostSamples.join('\n')).to.equal(0);
    expect(r.appliedTwice, r.twiceSamples.join('\n')).to.equal(0);
    expect(r.ok).to.be.greaterThan(1000);
  });

  it('no write from a fenced activation accepted', () => {
    expect(run.report.fencedWritesAccepted, run.report.fencedSamples.join('\n')).to.equal(0);
  });

  it('every call settled by its deadline + 100 ms', () => {
    expect(run.report.late, run.report.lateSamples.join('\n')).to.equal(0);
  });

  it(`the cluster recovers from every fault before the next one (availability >= ${AVAILABLE}, calls under ${SLOW_MS} ms)`, () => {
    const r = run.report;
    const stuck = r.recovery.filter((f, i) => {
      const until = r.recovery[i + 1]?.at ?? run.to;
      return f.at + f.recoveryMs >= until - 1000;
    });
    expect(
      stuck.map((f) => f.fault),
      stuck.map((f) => `${f.fault}, windows not recovered:\n  ${f.bad.join('\n  ')}`).join('\n'),
    ).to.deep.equal([]);
  });
});
