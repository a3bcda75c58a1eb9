import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import type { Grain } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes } from './memory-nodes';

/** Activations in the test: the "1M activations then passivation on one node". */
const ACTIVATIONS = 1_000_000;
/**
 * Idle timeout of the kind: long enough that a large crowd is active at once (~ rate x 2 s),
 * short enough that the last ones passivate soon after the calls end.
 */
const IDLE_MS = 2000;
/** Concurrent callers activating new identities. */
const CALLERS = 1000;
/** Heap sampled after this many activations, to record the peak while the crowd is active. */
const SAMPLE_EVERY = 50_000;

let activated = 0;
let deactivated = 0;

class Small implements Grain {
  private readonly data = { hits: 0 };
  onActivate(): void {
    activated++;
  }
  onDeactivate(): void {
    deactivated++;
  }
  receive(): unknown {
    return ++this.data.hits;
  }
}

// The shared mocha config does not pass --expose-gc: turn it on here and take gc from a fresh
// context (the flag only applies to contexts created after it is set).
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

function gc(): void {
  collect();
  collect();
}

async function passivated(c: { activationCount(): number }): Promise<void> {
  while (c.activationCount() > 0 || deactivated < activated) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('memory after passivation', function () {
  this.timeout(120_000);
  // No activation log: two million log entries would be the largest thing on the heap.
  const nodes = new MemoryNodes(
    () => [kind('small', () => new Small(), { idleTimeoutMs: IDLE_MS, shardCount: 256 })],
    { ttlMs: 5000, activationLog: false },
  );
  before(() => nodes.add('heap-1'));
  after(() => nodes.stopAll());

  it(`${ACTIVATIONS.toLocaleString('en')} activations then passivation on one node: the heap returns within 10% of its level before`, async () => {
    const c = nodes.nodes[0]!;
    // warm up every code path (and let the warm-up grains passivate) before the baseline
    await Promise.all(Array.from({ length: 1000 }, (_, i) => c.request('small', `w-${i}`, 1)));
    await passivated(c);
    gc();
    const before = process.memoryUsage().heapUsed;
    activated = 0;
    deactivated = 0;
    let next = 0;
    let maxActive = 0;
    let peak = before;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        while (next < ACTIVATIONS) {
          const n = next++;
          await c.request('small', `h-${n}`, 1, { timeoutMs: 30_000 });
          if (n % SAMPLE_EVERY === 0) {
            maxActive = Math.max(maxActive, c.activationCount());
            peak = Math.max(peak, process.memoryUsage().heapUsed);
          }
        }
      }),
    );
    const activateMs = Date.now() - t0;
    await passivated(c);
    await new Promise((r) => setTimeout(r, 100)); // actors finish stopping
    gc();
    const after = process.memoryUsage().heapUsed;
    const mb = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MB`;
    console.log(
      `      ${ACTIVATIONS} activations in ${activateMs} ms, up to ${maxActive} active at once; ` +
        `heap before ${mb(before)}, peak ${mb(peak)}, after ${mb(after)}`,
    );
    expect(activated, 'activations').to.equal(ACTIVATIONS);
    expect(deactivated, 'passivations').to.equal(ACTIVATIONS);
    expect(maxActive, 'a crowd was active at once').to.be.greaterThan(10_000);
    expect(peak - before, 'the activations did take memory').to.be.greaterThan(maxActive * 100);
    expect(after, `heap after (${after}) vs before (${before})`).to.be.at.most(before * 1.1);
  });
});
