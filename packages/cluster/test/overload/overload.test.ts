import { expect } from 'chai';
import { OVERLOAD_DEFAULTS, formatPhase, runOverload, type OverloadReport } from './overload-run';

/**
 * Issue 26's plateau, bounded: one node whose turns cost a fixed CPU time, one load-generator
 * process offering twice the node's measured capacity, open loop, with 1 s deadlines. Before
 * overload control the node spent its CPU on calls whose callers had given up and goodput fell
 * to a third of capacity at 1.33x. The test asks for a plateau with room for a shared CI
 * machine (>= 0.7 of the goodput just under capacity; the benchmark's figures are in
 * docs/overload.md); turns of 200 µs keep the load light enough for one generator.
 */
/** Runs of the scenario when the measured capacity turns out to be understated. */
const MAX_RUNS = 3;

/** True when a phase offered no overload: the node served nearly every call it was offered. */
const servedAll = (phase: OverloadReport['phases'][number]): boolean =>
  phase.goodput >= 0.95 * phase.offered;

describe('overload (node-bound, open loop)', function () {
  this.timeout(120_000);
  let report: OverloadReport;

  before(async function () {
    this.timeout(360_000);
    for (let attempt = 1; ; attempt++) {
      report = await runOverload({
        ...OVERLOAD_DEFAULTS['node-bound'],
        generators: 1,
        turnUs: 200,
        capacityInFlight: 100,
        capacityMs: 2000,
        multiples: [0.9, 2],
        phaseMs: 3000,
        recovery: undefined,
        log: (line) => process.stdout.write(`      ${line}\n`),
      });
      // Capacity is measured first, in a closed loop. On a shared machine another process's
      // burst during that measure understates it, and "2x" is then no overload at all: the node
      // serves every call and refuses none (CI once: 2x of 364/s served whole on 0.36 cores).
      // Such a run says nothing about overload: measure again, at most three times.
      const twice = report.phases[1]!;
      if (!servedAll(twice) || attempt === MAX_RUNS) break;
      process.stdout.write(
        `      2x of the measured capacity was no overload (${formatPhase(twice, report.capacity)}); measuring again\n`,
      );
    }
  });

  it('keeps goodput at 2x capacity on a plateau, answering within the deadline', () => {
    const [under, twice] = report.phases;
    expect(under!.goodput, formatPhase(under!, report.capacity)).to.be.above(0);
    expect(twice!.goodput / under!.goodput, formatPhase(twice!, report.capacity)).to.be.at.least(
      0.7,
    );
    expect(twice!.p99).to.be.at.most(1000);
  });

  it('refuses the excess at once with OverloadedError instead of timing it out', () => {
    const twice = report.phases[1]!;
    const overloaded = twice.errors.ERR_OVERLOADED ?? 0;
    const expired = twice.errors.ERR_DEADLINE_EXCEEDED ?? 0;
    expect(overloaded, formatPhase(twice, report.capacity)).to.be.above(expired);
  });
});
