import { expect } from 'chai';
import { applyOp, emptyOpCounter, OpLoad, type OpCounterState } from '../../src/index';

describe('OpLoad', () => {
  it('retries a failed op with the same number until acknowledged, and reports recovery after a fault', async () => {
    const states = new Map<string, OpCounterState>();
    let down = false;
    const load = new OpLoad({
      callers: 4,
      grains: ['g0', 'g1'],
      retryPauseMs: 5,
      call: async (grain, op) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (down) throw Object.assign(new Error('down'), { code: 'ERR_DOWN' });
        let state = states.get(grain);
        if (state === undefined) states.set(grain, (state = emptyOpCounter()));
        return applyOp(state, op);
      },
    }).start();
    const waitAcks = async (n: number): Promise<void> => {
      const target = load.acknowledged + n;
      while (load.acknowledged < target) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await waitAcks(50);
    const faultAt = Date.now();
    down = true;
    await new Promise((resolve) => setTimeout(resolve, 100));
    down = false;
    await waitAcks(50);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await load.stop();

    const report = load.ledger.check(states);
    expect(report.lost).to.equal(0);
    expect(report.failedByCode.ERR_DOWN).to.be.above(0);
    expect(load.grainsFailedWith('ERR_DOWN').length).to.be.above(0);
    const recovery = load.recoveryMs(faultAt)!;
    expect(recovery).to.be.within(90, 1000);
    const windows = load.availability(1000);
    expect(windows.reduce((n, w) => n + w.ok + w.failed, 0)).to.equal(report.calls);
  });
});
