import { expect } from 'chai';
import { PeerSilence, watchSilence } from '../../src/remote/internal/peer-silence';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('PeerSilence (a silence report, confirmed before callers hold their calls)', () => {
  it('marks the peer silent once the report is confirmed, since its last credit', async () => {
    const holder = { silence: new PeerSilence() };
    const w = watchSilence(holder, undefined);
    const before = Date.now();
    w.silent(1000);
    expect(holder.silence.since, 'not before it is confirmed').to.equal(0);
    await sleep(200);
    expect(holder.silence.since).to.be.within(before - 1000, before - 990);
    w.heard();
    expect(holder.silence.since, 'a credit ends it').to.equal(0);
  });

  it('does not mark a peer that credits while the report is confirmed', async () => {
    const holder = { silence: new PeerSilence() };
    const w = watchSilence(holder, undefined);
    w.silent(1000);
    await sleep(20);
    w.heard();
    await sleep(200);
    expect(holder.silence.since).to.equal(0);
  });

  it('does not mark the peer when this process was the one held (its own loop ran late)', async () => {
    const holder = { silence: new PeerSilence() };
    const w = watchSilence(holder, undefined);
    w.silent(1000);
    const until = Date.now() + 300;
    while (Date.now() < until); // a long synchronous turn here, not a silent peer
    await sleep(50);
    expect(holder.silence.since).to.equal(0);
    // The writer reports again while the peer stays silent: that one is confirmed.
    w.silent(2000);
    await sleep(200);
    expect(holder.silence.since).to.not.equal(0);
  });
});
