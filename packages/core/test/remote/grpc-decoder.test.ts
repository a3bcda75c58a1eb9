import { expect } from 'chai';
import { FrameDecoder, ReceiveBuffers } from '../../src/remote/internal/grpc-decoder';
import { framedInPlace, prefixableMemory } from '../../src/remote/internal/grpc-frames';

/** `body` with gRPC's prefix (uncompressed, its length), as it comes over HTTP/2. */
function grpcMessage(body: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.byteLength, 1);
  return Buffer.concat([prefix, body]);
}

function pattern(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed * 13 + (i >>> 9)) & 255;
  return b;
}

/** `bytes` cut at `cuts` (sorted offsets) into pieces, as HTTP/2 DATA frames would bring them. */
function cut(bytes: Buffer, cuts: number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.byteLength]) {
    pieces.push(Buffer.from(bytes.subarray(from, at)));
    from = at;
  }
  return pieces;
}

describe('FrameDecoder: gRPC messages joined in reused memory', () => {
  it('returns each message whole with its prefix, however the bytes are cut (prefixes split too)', () => {
    const bodies = [0, 3, 100, 16 * 1024, 70_000, 5, 200_000].map((n, k) => pattern(n, k));
    const stream = Buffer.concat(bodies.map(grpcMessage));
    // Deterministic cuts: every 4,999 bytes, plus cuts inside the first prefixes (1, 2, 7).
    const cuts = [1, 2, 7];
    for (let at = 4999; at < stream.byteLength; at += 4999) cuts.push(at);
    for (const pieces of [[stream], cut(stream, cuts)]) {
      const decoder = new FrameDecoder({ maxReadMessageLength: -1 }, new ReceiveBuffers());
      const out = pieces.flatMap((p) => decoder.write(p));
      expect(out.length, `messages from ${pieces.length} pieces`).to.equal(bodies.length);
      out.forEach((m, k) => {
        expect(m.readUInt32BE(1), `message ${k}'s prefix states its length`).to.equal(
          bodies[k]!.byteLength,
        );
        expect(m.subarray(5).equals(bodies[k]!), `message ${k} byte for byte`).to.equal(true);
      });
    }
  });

  it('decodes large messages into memory handed back, and never takes back memory it did not allocate', () => {
    const buffers = new ReceiveBuffers();
    const decoder = new FrameDecoder({ maxReadMessageLength: -1 }, buffers);
    const first = decoder.write(grpcMessage(pattern(64 * 1024, 1)))[0]!;
    expect(buffers.give(first.subarray(5)), 'its own memory comes back').to.equal(true);
    const second = decoder.write(grpcMessage(pattern(64 * 1024 - 10, 2)))[0]!;
    expect(second.buffer, 'the next large message reuses it').to.equal(first.buffer);
    expect(second.subarray(5).equals(pattern(64 * 1024 - 10, 2))).to.equal(true);
    expect(buffers.reused).to.equal(1);
    const small = decoder.write(grpcMessage(pattern(100, 3)))[0]!;
    expect(buffers.give(small), 'a small message is not pooled memory').to.equal(false);
    expect(buffers.give(Buffer.alloc(128 * 1024)), 'foreign memory').to.equal(false);
  });

  it('refuses a message over maxReadMessageLength before buffering it, and keeps refusing', () => {
    const limits = { maxReadMessageLength: 1000 };
    const decoder = new FrameDecoder(limits, new ReceiveBuffers());
    expect(decoder.write(grpcMessage(pattern(1000, 1))).length).to.equal(1);
    const prefix = grpcMessage(pattern(1001, 1)).subarray(0, 5);
    expect(() => decoder.write(prefix)).to.throw(/larger than max \(1001 vs 1000\)/);
    expect(() => decoder.write(Buffer.alloc(10))).to.throw(/larger than max/);
    // The limit is read live (the acceptor raises it once the peer authenticated).
    const raised = new FrameDecoder(limits, new ReceiveBuffers());
    limits.maxReadMessageLength = 2000;
    expect(raised.write(grpcMessage(pattern(1500, 2))).length).to.equal(1);
  });
});

describe('framedInPlace: a frame with room for gRPC’s prefix is framed without a copy', () => {
  it('writes the prefix before a frame at offset 5 of prefixable memory, and leaves other frames alone', () => {
    const memory = prefixableMemory(1000);
    const frame = memory.subarray(5, 805);
    frame.fill(9);
    const framed = framedInPlace(frame)!;
    expect(framed.buffer, 'the same memory').to.equal(memory.buffer);
    expect(framed.byteLength).to.equal(805);
    expect(framed[0], 'uncompressed').to.equal(0);
    expect(framed.readUInt32BE(1)).to.equal(800);
    expect(framed.subarray(5).every((b) => b === 9)).to.equal(true);
    expect(framedInPlace(memory.subarray(6, 100)), 'not at the prefix room').to.equal(undefined);
    expect(framedInPlace(Buffer.alloc(2000).subarray(5)), 'memory without room').to.equal(
      undefined,
    );
    expect(framedInPlace(Buffer.from('small')), 'a pool slice').to.equal(undefined);
  });
});
