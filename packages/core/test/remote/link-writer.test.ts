import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import type { FrameStream } from '../../src/remote/internal/link-types';
import { LinkWriter, streamHighWater } from '../../src/remote/internal/link-writer';

/**
 * A stream that says it is full after every write (as grpc-js does past 16 frames) and
 * completes writes only when told, in order.
 */
class SlowStream extends EventEmitter {
  readonly frames: Buffer[] = [];
  private readonly pending: Array<() => void> = [];
  write(frame: Buffer, cb: () => void): boolean {
    this.frames.push(frame);
    this.pending.push(cb);
    return false;
  }
  /** The connection took the oldest `n` writes. */
  complete(n: number): void {
    for (let i = 0; i < n; i++) this.pending.shift()!();
  }
}

const KIB = 1024;

describe('LinkWriter: blocked by bytes in the stream, not by its frame count', () => {
  it('blocks at 8 MiB in the stream, or at half of a smaller maxOutboundBytes', () => {
    const limits = { writeStallTimeoutMs: 60_000, linkProbeMs: 0 };
    expect(streamHighWater({ ...limits, maxOutboundBytes: 16 * 1024 * KIB })).to.equal(
      8 * 1024 * KIB,
    );
    expect(streamHighWater({ ...limits, maxOutboundBytes: Infinity })).to.equal(8 * 1024 * KIB);
    expect(streamHighWater({ ...limits, maxOutboundBytes: 2 * 1024 * KIB })).to.equal(1024 * KIB);
  });

  it('with 2 MiB maxOutboundBytes: writes up to 1 MiB past a full stream, blocks there, and is writable again at 256 KiB, sending what waited in order', () => {
    const stream = new SlowStream();
    let writable = 0;
    const w = new LinkWriter(
      stream as unknown as FrameStream,
      { maxOutboundBytes: 2 * 1024 * KIB, writeStallTimeoutMs: 60_000, linkProbeMs: 0 },
      () => 'peer:1',
      () => undefined,
      () => writable++,
    );
    const done: number[] = [];
    // 64 frames of 16 KiB: the 64th reaches 1 MiB in the stream.
    for (let i = 0; i < 64; i++) {
      expect(w.isBlocked, `blocked after ${i} frames (${i * 16} KiB)`).to.equal(false);
      w.write(Buffer.alloc(16 * KIB, i), () => done.push(i));
    }
    expect(w.isBlocked, 'blocked at 1 MiB in the stream').to.equal(true);
    expect(stream.frames).to.have.length(64);
    // Written while blocked: waits in the writer.
    w.write(Buffer.alloc(16 * KIB, 64), () => done.push(64));
    expect(stream.frames, 'a frame written while blocked waits').to.have.length(64);

    stream.complete(47); // 17 frames (272 KiB) still in the stream: above the low-water mark
    expect(w.isBlocked, 'still blocked at 272 KiB').to.equal(true);
    expect(writable).to.equal(0);
    stream.complete(1); // 256 KiB: writable again, the waiting frame goes out
    expect(w.isBlocked, 'writable at 256 KiB').to.equal(false);
    expect(writable).to.equal(1);
    expect(stream.frames).to.have.length(65);
    expect(stream.frames[64]![0], 'the frame that waited').to.equal(64);

    stream.complete(17);
    expect(done, 'callbacks in write order').to.deep.equal([...Array(65).keys()]);
    w.stop();
  });
});
