import { expect } from 'chai';
import {
  MAX_TXN_WINDOW,
  SLOW_TXN_MS,
  TxnWindow,
} from '../../../src/providers/etcd/etcd-txn-window';

describe('TxnWindow', () => {
  it('starts at one transaction, grows by one per fast answer up to the cap', () => {
    const w = new TxnWindow();
    expect(w.size).to.equal(1);
    const sizes: number[] = [];
    for (let i = 0; i < MAX_TXN_WINDOW + 2; i++) {
      w.answered(5);
      sizes.push(w.size);
    }
    expect(sizes).to.deep.equal([2, 3, 4, 4, 4, 4]);
  });

  it('halves on a slow answer and never goes below one', () => {
    const w = new TxnWindow();
    for (let i = 0; i < MAX_TXN_WINDOW; i++) w.answered(1);
    w.answered(SLOW_TXN_MS);
    expect(w.size, 'after one slow answer at the cap').to.equal(MAX_TXN_WINDOW / 2);
    w.answered(5_000);
    w.answered(5_000);
    w.answered(5_000);
    expect(w.size, 'after many slow answers').to.equal(1);
    w.answered(SLOW_TXN_MS - 1);
    expect(w.size, 'a fast answer grows it again').to.equal(2);
  });
});
