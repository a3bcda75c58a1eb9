import { expect } from 'chai';
import { AssemblyBuffers, ChunkAssembler } from '../../src/remote/internal/chunk-assembler';
import { decodeChunk, encodeChunk } from '../../src/remote/internal/link-frames';

describe('AssemblyBuffers: memory that chunked frames are joined in, reused', () => {
  it('gives buffers of exactly the size asked, never from Node’s shared pool, and reuses a returned one that is large enough', () => {
    const buffers = new AssemblyBuffers();
    const first = buffers.take(100_000);
    expect(first.byteLength).to.equal(100_000);
    expect(first.byteOffset, 'its own allocation').to.equal(0);
    buffers.give(first);
    expect(buffers.spareBytes).to.equal(100_000);
    const smaller = buffers.take(80_000);
    expect(smaller.buffer, 'the returned memory joins the next frame').to.equal(first.buffer);
    expect(smaller.byteLength).to.equal(80_000);
    expect(buffers.spareBytes, 'lent out, not spare').to.equal(0);
    buffers.give(smaller);
    expect(buffers.spareBytes, 'the whole allocation comes back').to.equal(100_000);
    const larger = buffers.take(200_000);
    expect(larger.buffer, 'a spare too small is not used').to.not.equal(first.buffer);
  });

  it('keeps at most two spares, the largest, and none under 64 KiB', () => {
    const buffers = new AssemblyBuffers();
    buffers.give(Buffer.allocUnsafeSlow(1000));
    expect(buffers.spareBytes, 'a small buffer is not kept').to.equal(0);
    for (const n of [100_000, 300_000, 200_000, 50_000 + 65_536]) {
      buffers.give(Buffer.allocUnsafeSlow(n));
    }
    expect(buffers.spareBytes, 'the two largest').to.equal(300_000 + 200_000);
  });

  it('joins the chunks of a frame in memory from its buffers', () => {
    const buffers = new AssemblyBuffers();
    const spare = Buffer.allocUnsafeSlow(128 * 1024);
    buffers.give(spare);
    const assembler = new ChunkAssembler(1024 * 1024, { buffers });
    const frame = Buffer.alloc(100_000);
    for (let i = 0; i < frame.length; i++) frame[i] = (i * 7) % 253;
    let joined: Buffer | undefined;
    for (let offset = 0; offset < frame.length; offset += 16_384) {
      const size = Math.min(16_384, frame.length - offset);
      expect(joined, 'no frame before its last chunk').to.equal(undefined);
      joined = assembler.add(decodeChunk(encodeChunk(frame, offset, size))!);
    }
    expect(joined!.equals(frame), 'the chunks join to the frame').to.equal(true);
    expect(joined!.buffer, 'joined in the spare').to.equal(spare.buffer);
  });
});
