import { expect } from 'chai';
import { PongTracker } from '../src/demo/pong-tracker';

describe('PongTracker', () => {
  it('reads pong lines: count, rpc or plain message, and the answering node', () => {
    const t = new PongTracker();
    t.observe('pinger', '12:00:01.000 info  pong cnt=3 via=rpc from=ponger-a ms=2', 1000);
    t.observe('pinger', '12:00:01.001 info  pong cnt=3 via=message from=ponger-a', 1001);
    t.observe('pinger', '12:00:01.002 warn  ping failed cnt=4', 1002);
    expect(t.pongs).to.deep.equal([
      { cnt: 3, via: 'rpc', node: 'ponger-a', at: 1000 },
      { cnt: 3, via: 'message', node: 'ponger-a', at: 1001 },
    ]);
    expect(t.answeringNodes()).to.deep.equal(['ponger-a']);
  });

  it('knows the host of a grain from activation lines until its deactivation', () => {
    const t = new PongTracker();
    t.observe(
      'ponger-b',
      '12:00:00.000 info  activated grain=messages.Ponger/ponger-1 activation=a1',
      1,
    );
    expect(t.hostOf('ponger-1')).to.equal('ponger-b');
    t.observe(
      'ponger-b',
      '12:00:00.000 info  deactivated grain=messages.Ponger/ponger-1 activation=a1',
      2,
    );
    expect(t.hostOf('ponger-1')).to.equal(undefined);
    t.observe(
      'ponger-a',
      '12:00:00.000 info  activated grain=messages.Ponger/ponger-1 activation=a2',
      3,
    );
    expect(t.hostOf('ponger-1')).to.equal('ponger-a');
  });

  it('falls back to the node of the last rpc pong when no activation was seen', () => {
    const t = new PongTracker();
    t.observe('pinger', '12:00:00.000 info  pong cnt=1 via=rpc from=ponger-b', 1);
    t.observe('pinger', '12:00:00.000 info  pong cnt=1 via=message from=ponger-a', 2);
    expect(t.hostOf('ponger-1')).to.equal('ponger-b');
  });

  it('measures the pause from the last pong before a kill to the first from another node', () => {
    const t = new PongTracker();
    t.observe(
      'ponger-a',
      '12:00:00.000 info  activated grain=messages.Ponger/ponger-1 activation=a1',
      0,
    );
    t.observe('pinger', '12:00:00.000 info  pong cnt=1 via=rpc from=ponger-a', 1000);
    t.observe('pinger', '12:00:00.000 info  pong cnt=2 via=rpc from=ponger-a', 2000);
    t.markKilled('ponger-a', 2500);
    expect(t.hostOf('ponger-1')).to.equal('ponger-a'); // only the rpc fallback is left
    expect(t.failover()?.pauseMs).to.equal(undefined);
    t.observe('pinger', '12:00:00.000 info  pong cnt=3 via=rpc from=ponger-b', 4700);
    const f = t.failover();
    expect(f?.killed).to.equal('ponger-a');
    expect(f?.lastPongBefore?.cnt).to.equal(2);
    expect(f?.firstPongAfter?.node).to.equal('ponger-b');
    expect(f?.pauseMs).to.equal(2700);
  });

  it('counts a pong of the killed node read just after the kill as the last one before the pause', () => {
    const t = new PongTracker();
    t.observe('pinger', '12:00:00.000 info  pong cnt=1 via=rpc from=ponger-a', 1000);
    t.markKilled('ponger-a', 1500);
    t.observe('pinger', '12:00:00.000 info  pong cnt=2 via=message from=ponger-a', 1510);
    t.observe('pinger', '12:00:00.000 info  pong cnt=3 via=rpc from=ponger-b', 4010);
    expect(t.failover()?.lastPongBefore?.cnt).to.equal(2);
    expect(t.failover()?.pauseMs).to.equal(2500);
  });

  it('measures from the kill when no pong came before it', () => {
    const t = new PongTracker();
    t.markKilled('ponger-a', 1000);
    t.observe('pinger', '12:00:00.000 info  pong cnt=1 via=rpc from=ponger-b', 3500);
    expect(t.failover()?.lastPongBefore).to.equal(undefined);
    expect(t.failover()?.pauseMs).to.equal(2500);
  });

  it('keeps measuring the same pause after more pongs arrive in the same millisecond', () => {
    const t = new PongTracker();
    t.observe('pinger', '12:00:00.000 info  pong cnt=1 via=rpc from=ponger-a', 1000);
    t.markKilled('ponger-a', 1500);
    t.observe('pinger', '12:00:00.000 info  pong cnt=3 via=message from=ponger-b', 3700);
    t.observe('pinger', '12:00:00.000 info  pong cnt=2 via=rpc from=ponger-b', 3700);
    expect(t.failover()?.firstPongAfter?.cnt).to.equal(3);
    expect(t.failover()?.pauseMs).to.equal(2700);
  });
});
