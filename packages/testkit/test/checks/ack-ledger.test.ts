import { expect } from 'chai';
import { AckLedger, applyOp, emptyOpCounter, type OpCounterState } from '../../src/index';

/** A grain's state after applying caller `c`'s ops 1..n. */
function stateWith(ops: Record<string, number>): OpCounterState {
  const state = emptyOpCounter();
  for (const [c, n] of Object.entries(ops)) for (let s = 1; s <= n; s++) applyOp(state, { c, s });
  return state;
}

describe('AckLedger', () => {
  it('finds no loss when the stored state holds every acknowledged op, and counts calls and failures', () => {
    const ledger = new AckLedger();
    ledger.acknowledge('g', 'a', 1, 0);
    ledger.fail('ERR_STATE_UNAVAILABLE');
    ledger.acknowledge('g', 'a', 2, 1);
    ledger.acknowledge('g', 'b', 1, 0);
    const report = ledger.check(new Map([['g', stateWith({ a: 2, b: 1 })]]));
    expect(report).to.deep.include({
      calls: 4,
      acknowledged: 3,
      failed: 1,
      failedByCode: { ERR_STATE_UNAVAILABLE: 1 },
      lost: 0,
      regressionsServed: 0,
    });
    expect(report.appliedTwice).to.deep.equal([]);
  });

  it('counts acknowledged ops above the stored last number as lost, per grain', () => {
    const ledger = new AckLedger();
    for (let s = 1; s <= 5; s++) ledger.acknowledge('g', 'a', s, s - 1);
    ledger.acknowledge('h', 'a', 1, 0);
    const report = ledger.check(new Map([['g', stateWith({ a: 3 })]]));
    expect([report.lost, report.grainsWithLoss]).to.deep.equal([3, ['g', 'h']]);
    expect(report.lostSample[0]).to.deep.equal({ grain: 'g', caller: 'a', seq: 4, stored: 3 });
  });

  it('counts a grain that went back and applied later ops as losing the difference', () => {
    const ledger = new AckLedger();
    for (let s = 1; s <= 4; s++) ledger.acknowledge('g', 'a', s, s - 1);
    ledger.allowRegressions();
    ledger.acknowledge('g', 'a', 5, 0); // served after a reset the operator accepted
    const reset = emptyOpCounter();
    applyOp(reset, { c: 'a', s: 5 });
    const report = ledger.check(new Map([['g', reset]]));
    expect(report.lost).to.equal(4);
    expect(report.regressionsServed).to.equal(0);
  });

  it('counts replies that showed a caller its own acknowledged op missing, unless allowed', () => {
    const ledger = new AckLedger();
    ledger.acknowledge('g', 'a', 1, 0);
    ledger.acknowledge('g', 'a', 2, 0); // the grain had forgotten op 1
    expect(ledger.check(new Map()).regressionsServed).to.equal(1);
  });

  it('flags a grain that stores more ops than it holds numbers for (applied twice)', () => {
    const ledger = new AckLedger();
    ledger.acknowledge('g', 'a', 1, 0);
    const doubled: OpCounterState = { n: 2, last: { a: 1 } };
    expect(ledger.check(new Map([['g', doubled]])).appliedTwice).to.deep.equal(['g']);
  });
});

describe('applyOp', () => {
  it('applies an op once; a retry is answered, not applied again', () => {
    const state = emptyOpCounter();
    expect(applyOp(state, { c: 'a', s: 1 })).to.deep.equal({ prev: 0, n: 1 });
    expect(applyOp(state, { c: 'a', s: 1 })).to.deep.equal({ prev: 1, n: 1 });
    expect(applyOp(state, { c: 'b', s: 1 })).to.deep.equal({ prev: 0, n: 2 });
  });
});
