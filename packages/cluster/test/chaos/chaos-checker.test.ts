import { expect } from 'chai';
import { checkChaos, type ChaosLogs } from './chaos-checker';
import type { CounterState, LoadOutcome, WriteRecord } from './fixtures/chaos-protocol';

const T = 1_000_000_000_000; // a round epoch ms: windows start on whole seconds

function load(over: Partial<LoadOutcome> = {}): LoadOutcome {
  return {
    windows: [],
    errors: {},
    details: {},
    calls: 0,
    ok: 0,
    late: 0,
    lateSamples: [],
    maxOvershootMs: 0,
    ops: [],
    ...over,
  };
}

function logs(over: Partial<ChaosLogs> = {}): ChaosLogs {
  return {
    nodeLines: [],
    downs: [],
    writes: [],
    load: load(),
    finalStates: new Map(),
    faults: [],
    from: T,
    to: T + 10_000,
    ...over,
  };
}

function act(
  node: string,
  event: 'activate' | 'deactivate',
  id: string,
  at: number,
): Record<string, unknown> {
  return {
    type: 'act',
    event,
    kind: 'k',
    identity: 'g-1',
    activationId: id,
    member: node,
    node,
    at,
  };
}

function write(g: string, c: string, s: number, v: number, e: number, at = T): WriteRecord {
  return { g, c, s, v, e, a: `a-${e}`, node: 'n', at };
}

const state = (n: number, last: number, count: number): CounterState => ({
  n,
  last: { c1: last },
  count: { c1: count },
});

describe('chaos checker', () => {
  describe('overlapping activations', () => {
    it('reports two activations of one grain on members that both still served', () => {
      const r = checkChaos(
        logs({ nodeLines: [act('a', 'activate', 'x', T + 10), act('b', 'activate', 'y', T + 20)] }),
      );
      expect(r.overlaps).to.have.length(1);
    });

    it("does not count an activation after its member's lease was lost, or after others dropped it", () => {
      const lost = checkChaos(
        logs({
          nodeLines: [
            act('a', 'activate', 'x', T + 10),
            { type: 'lease', state: 'lost', node: 'a', at: T + 15 },
            act('b', 'activate', 'y', T + 20),
          ],
        }),
      );
      expect(lost.overlaps).to.deep.equal([]);
      const dropped = checkChaos(
        logs({
          nodeLines: [
            act('a', 'activate', 'x', T + 10),
            { type: 'topology', node: 'b', members: ['b'], at: T + 15 },
            act('b', 'activate', 'y', T + 20),
          ],
        }),
      );
      expect(dropped.overlaps).to.deep.equal([]);
    });

    it('does not count an activation after its member was SIGKILLed', () => {
      const r = checkChaos(
        logs({
          nodeLines: [act('a', 'activate', 'x', T + 10), act('b', 'activate', 'y', T + 20)],
          downs: [{ node: 'a', at: T + 15 }],
        }),
      );
      expect(r.overlaps).to.deep.equal([]);
    });
  });

  describe('acknowledged ops', () => {
    const ops: LoadOutcome['ops'] = [
      ['c1', 1, 'g-1', 1],
      ['c1', 2, 'g-1', 1],
      ['c1', 3, 'g-1', 0],
    ];

    it('accepts a final state holding every acknowledged op (and maybe an unacknowledged one)', () => {
      for (const st of [state(2, 2, 2), state(3, 3, 3)]) {
        const r = checkChaos(logs({ load: load({ ops }), finalStates: new Map([['g-1', st]]) }));
        expect(r.lostAcknowledged).to.equal(0);
        expect(r.appliedTwice).to.equal(0);
      }
    });

    it('counts acknowledged ops the final state lacks (a store that went back)', () => {
      const r = checkChaos(
        logs({ load: load({ ops }), finalStates: new Map([['g-1', state(1, 1, 1)]]) }),
      );
      expect(r.lostAcknowledged).to.equal(1);
      const gone = checkChaos(
        logs({ load: load({ ops }), finalStates: new Map([['g-1', undefined]]) }),
      );
      expect(gone.lostAcknowledged).to.equal(2);
    });

    it('counts an op applied in two accepted writes, and a count above the ops attempted', () => {
      const twice = checkChaos(
        logs({ writes: [write('g-1', 'c1', 1, 1, 5), write('g-1', 'c1', 1, 2, 5)] }),
      );
      expect(twice.appliedTwice).to.equal(1);
      const excess = checkChaos(
        logs({ load: load({ ops }), finalStates: new Map([['g-1', state(4, 3, 4)]]) }),
      );
      expect(excess.appliedTwice).to.equal(1);
    });
  });

  it('counts an accepted write under an older epoch than one already stored (a fenced writer)', () => {
    const r = checkChaos(
      logs({
        writes: [
          write('g-1', 'c1', 1, 1, 5),
          write('g-1', 'c1', 2, 2, 9),
          write('g-1', 'c1', 3, 3, 5),
        ],
      }),
    );
    expect(r.fencedWritesAccepted).to.equal(1);
    expect(r.fencedSamples[0]).to.match(/v3 .*\(epoch 5\) accepted after v2 under epoch 9/);
  });

  it('measures availability per second (a silent second as 0) and recovery per fault (until no window is below 0.99 or slower than 1 s)', () => {
    const s0 = T / 1000;
    const r = checkChaos(
      logs({
        load: load({
          windows: [
            [s0, 100, 0, 5],
            [s0 + 1, 50, 50, 900],
            // s0 + 2: nothing settled
            [s0 + 3, 100, 0, 4000],
            [s0 + 4, 100, 0, 5],
          ],
          details: {
            [s0 + 1]: {
              errors: { 'DeadlineExceededError:ERR_DEADLINE_EXCEEDED': 50 },
              slowest: '',
            },
            [s0 + 3]: { errors: {}, slowest: 'g-1 op c1/7: 4000 ms, ok' },
          },
        }),
        faults: [{ name: 'kill', at: T + 1200 }],
        nodeLines: [
          { type: 'lease', state: 'lost', node: 'a', at: T + 1500 },
          { type: 'lease', state: 'lost', node: 'b', at: T + 900 },
        ],
        to: T + 5000,
      }),
    );
    expect(r.windows.map((w) => w.availability)).to.deep.equal([1, 0.5, 0, 1, 1]);
    expect(r.minAvailability).to.equal(0);
    expect(r.recovery).to.deep.equal([
      {
        fault: 'kill',
        at: T + 1200,
        recoveryMs: 2800,
        minAvailability: 0,
        slowestMs: 4000,
        fenced: ['a'],
        // Each window not recovered, with its failures and slowest call (the message CI prints).
        bad: [
          '1 s: availability 0.500 (ok 50, failed 50: DeadlineExceededError:ERR_DEADLINE_EXCEEDED 50), slowest 900 ms',
          '2 s: availability 0.000 (ok 0, failed 0), slowest 0 ms',
          '3 s: availability 1.000 (ok 100, failed 0), slowest 4000 ms (g-1 op c1/7: 4000 ms, ok)',
        ],
      },
    ]);
  });
});
