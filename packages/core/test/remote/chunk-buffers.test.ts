import { expect } from 'chai';
import { ChunkBuffers } from '../../src/remote/internal/chunk-buffers';
import { decodeChunk, encodeChunk } from '../../src/remote/internal/link-frames';

describe('ChunkBuffers: chunk memory reused once the chunk was written', () => {
  it('gives views of exactly the bytes asked, reuses a returned buffer, and never hands out a slice of Node’s shared pool', () => {
    const buffers = new ChunkBuffers();
    const small = buffers.take(100, 200);
    expect(small.byteLength).to.equal(100);
    // Its own allocation of the capacity asked (and room for gRPC's prefix before the chunk),
    // not a slice of the 8 KiB pool small Buffers share.
    expect(small.byteOffset, 'own allocation, the prefix room before it').to.equal(5);
    expect(small.buffer.byteLength, 'the capacity asked and the prefix').to.equal(205);
    buffers.give(small);
    const again = buffers.take(150, 200);
    expect(again.buffer, 'the returned memory serves the next chunk').to.equal(small.buffer);
    expect(again.byteLength).to.equal(150);
    buffers.give(again);
    const bigger = buffers.take(300, 300);
    expect(bigger.buffer, 'a spare too small is not used').to.not.equal(small.buffer);
    expect(bigger.byteLength).to.equal(300);
  });

  it('encodes chunks into reused memory that decode to the frame’s bytes', () => {
    const buffers = new ChunkBuffers();
    const frame = Buffer.alloc(10_000);
    for (let i = 0; i < frame.length; i++) frame[i] = i % 251;
    const joined: number[] = [];
    for (let offset = 0; offset < frame.length; offset += 4096) {
      const size = Math.min(4096, frame.length - offset);
      const chunk = encodeChunk(frame, offset, size, (n) => buffers.take(n, 4096 + 32));
      const decoded = decodeChunk(chunk)!;
      expect(decoded.total, `total on the first chunk only (offset ${offset})`).to.equal(
        offset === 0 ? frame.length : 0,
      );
      joined.push(...decoded.data);
      buffers.give(chunk);
    }
    expect(Buffer.from(joined).equals(frame), 'the chunks join to the frame').to.equal(true);
  });
});
