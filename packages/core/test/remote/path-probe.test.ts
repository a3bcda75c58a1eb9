import * as net from 'node:net';
import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { LinkWriter } from '../../src/remote/internal/link-writer';
import type { FrameStream } from '../../src/remote/internal/link-types';
import { PathProbe, probePath, type PathState } from '../../src/remote/internal/path-probe';

/** A probe function that answers from a script, one state per call. */
function scripted(states: PathState[]): { probe: typeof probePath; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    probe: (address) => {
      calls.push(address);
      return Promise.resolve(states.shift() ?? 'open');
    },
  };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('PathProbe (a silent link: lost path, or slow peer?)', () => {
  it('reports recovered only after a connect without answer and then one with', async () => {
    const { probe, calls } = scripted(['unreachable', 'unreachable', 'open']);
    const recovered: number[] = [];
    const p = new PathProbe(
      () => '10.0.0.1:7000',
      1000,
      (ms) => recovered.push(ms),
      probe,
    );
    for (const ms of [1000, 2000, 3000]) {
      p.silent(ms);
      await settle();
    }
    expect(calls).to.deep.equal(['10.0.0.1:7000', '10.0.0.1:7000', '10.0.0.1:7000']);
    expect(recovered).to.deep.equal([3000]);
    p.silent(4000); // stopped once it reported
    await settle();
    expect(calls).to.have.length(3);
  });

  it('never reports a peer whose address answers all along (a stalled event loop, SIGSTOP)', async () => {
    const { probe } = scripted(['open', 'open', 'refused', 'open']);
    const recovered: number[] = [];
    const p = new PathProbe(
      () => '10.0.0.1:7000',
      1000,
      (ms) => recovered.push(ms),
      probe,
    );
    for (let i = 0; i < 4; i++) {
      p.silent(1000 * (i + 1));
      await settle();
    }
    expect(recovered).to.deep.equal([]);
  });

  it('forgets a lost path once the peer credits again', async () => {
    const { probe } = scripted(['unreachable', 'open']);
    const recovered: number[] = [];
    const p = new PathProbe(
      () => '10.0.0.1:7000',
      1000,
      (ms) => recovered.push(ms),
      probe,
    );
    p.silent(1000);
    await settle();
    p.heard();
    p.silent(1000);
    await settle();
    expect(recovered).to.deep.equal([]);
  });

  it('probePath: open for a listening port, refused for a closed one', async () => {
    const server = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    expect(await probePath(`127.0.0.1:${port}`, 1000)).to.equal('open');
    await new Promise((r) => server.close(r));
    expect(await probePath(`127.0.0.1:${port}`, 1000)).to.equal('refused');
  });
});

describe('LinkWriter silence', () => {
  /** A stream that takes every write and never reads (nothing is ever credited). */
  function sink(): FrameStream {
    const s = new EventEmitter() as EventEmitter & {
      write: (b: Buffer, cb?: () => void) => boolean;
    };
    s.write = (_b, cb) => {
      cb?.();
      return true;
    };
    return s as unknown as FrameStream;
  }

  it('tells its watcher every linkProbeMs while written bytes stay uncredited, and heard on credit', async () => {
    const silent: number[] = [];
    let heard = 0;
    const w = new LinkWriter(
      sink(),
      { maxOutboundBytes: 1 << 20, writeStallTimeoutMs: 10_000, linkProbeMs: 40 },
      () => 'peer:1',
      () => undefined,
      () => undefined,
      { silent: (ms) => silent.push(ms), heard: () => heard++ },
    );
    w.write(Buffer.alloc(100));
    await new Promise((r) => setTimeout(r, 150));
    expect(silent.length).to.be.within(2, 4);
    expect(silent[0]).to.be.at.least(40);
    w.credit(100);
    expect(heard).to.equal(1);
    const before = silent.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(silent.length).to.equal(before); // nothing outstanding: no more ticks
    w.stop();
  });
});
