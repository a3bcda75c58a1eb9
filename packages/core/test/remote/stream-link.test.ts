import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { StreamLink, type FrameStream } from '../../src/remote/internal/stream-link';
import { encodeFrame, type WireFrame } from '../../src/remote/internal/wire';

/** The parts of a gRPC duplex stream a link uses, recording pause and resume. */
class FakeStream extends EventEmitter {
  writable = true;
  paused = 0;
  resumed = 0;
  write(): boolean {
    return true;
  }
  end(): void {
    this.writable = false;
  }
  pause(): this {
    this.paused++;
    return this;
  }
  resume(): this {
    this.resumed++;
    return this;
  }
  cancel(): void {}
}

const batchFrame = (): Buffer =>
  encodeFrame({ batch: { typeNames: [], targetIds: [], senderAddresses: [], envelopes: [] } });
const frame = (n: number): Buffer => encodeFrame({ goodbye: { address: `peer-${n}` } });
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function link(stream: FakeStream): { seen: string[]; closed: string[] } {
  const seen: string[] = [];
  const closed: string[] = [];
  new StreamLink(stream as unknown as FrameStream, 'client', 'peer', {
    onFrame: (_l, f: WireFrame) => seen.push(f.goodbye!.address),
    onClose: (_l, err) => closed.push(err?.message ?? 'ended'),
    onCorruptFrame: () => {},
  });
  return { seen, closed };
}

describe('StreamLink: one received frame per event-loop turn, a slice of them when behind', () => {
  it('handles a frame that finds it idle at once, and the ones that came with it a turn each, in order', async () => {
    const stream = new FakeStream();
    const { seen } = link(stream);
    for (let i = 0; i < 3; i++) stream.emit('data', frame(i));
    expect(seen).to.deep.equal(['peer-0']);
    await nextTurn();
    expect(seen).to.deep.equal(['peer-0', 'peer-1']);
    await nextTurn();
    await nextTurn();
    expect(seen).to.deep.equal(['peer-0', 'peer-1', 'peer-2']);
  });

  it('delivers the frames still waiting before it reports the end', () => {
    const stream = new FakeStream();
    const { seen, closed } = link(stream);
    for (let i = 0; i < 4; i++) stream.emit('data', frame(i));
    stream.emit('end');
    expect(seen).to.deep.equal(['peer-0', 'peer-1', 'peer-2', 'peer-3']);
    expect(closed).to.deep.equal(['ended']);
  });

  it('handles the waiting frames in one turn (for up to 1 ms) once 4 or more wait: it is behind', async () => {
    const stream = new FakeStream();
    const { seen } = link(stream);
    for (let i = 0; i < 6; i++) stream.emit('data', frame(i));
    expect(seen).to.have.length(1);
    await nextTurn();
    // Several in that one turn (all five but on a starved machine: the slice bounds a burst).
    expect(seen.length).to.be.greaterThan(2);
    while (seen.length < 6) await nextTurn();
    expect(seen).to.deep.equal(['peer-0', 'peer-1', 'peer-2', 'peer-3', 'peer-4', 'peer-5']);
  });

  it('pauses the stream when 64 frames wait, and resumes it once it caught up', async () => {
    const stream = new FakeStream();
    const { seen } = link(stream);
    for (let i = 0; i < 65; i++) stream.emit('data', frame(i));
    expect(stream.paused).to.equal(1);
    expect(stream.resumed).to.equal(0);
    await nextTurn();
    expect(seen.length).to.be.greaterThan(2);
    while (seen.length < 65) await nextTurn();
    expect(stream.resumed).to.equal(1);
    expect(seen[64]).to.equal('peer-64');
  });

  it('drain() handles what waits at once, with the times the frames arrived', async () => {
    const stream = new FakeStream();
    const times: number[] = [];
    const l = new StreamLink(stream as unknown as FrameStream, 'client', 'peer', {
      onFrame: (_l, _f, receivedAt) => times.push(receivedAt),
      onClose: () => {},
      onCorruptFrame: () => {},
    });
    const before = Date.now();
    stream.emit('data', batchFrame());
    stream.emit('data', batchFrame());
    stream.emit('data', batchFrame());
    await new Promise((r) => setTimeout(r, 30));
    // Both waiting frames were handled in later turns, but keep their arrival time.
    expect(times).to.have.length(3);
    for (const t of times) expect(t).to.be.within(before, before + 15);
    stream.emit('data', batchFrame());
    stream.emit('data', batchFrame());
    expect(times).to.have.length(4);
    l.drain();
    expect(times).to.have.length(5);
  });

  it('drops what waits when the link is aborted', async () => {
    const stream = new FakeStream();
    const { seen } = link(stream);
    stream.emit('data', frame(0));
    stream.emit('data', Buffer.from([0xff, 0xff, 0xff]));
    stream.emit('data', frame(2));
    await nextTurn();
    await nextTurn();
    expect(seen).to.deep.equal(['peer-0']);
  });
});
