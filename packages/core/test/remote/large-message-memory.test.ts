import { expect } from 'chai';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { ASSEMBLY_BUFFERS } from '../../src/remote/internal/chunk-assembler';
import type { TestNode } from './helpers';
import { startNode, stopNodes } from './helpers';

describe('Remote large messages: memory of joined frames', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  it('reuses the memory of JSON frames, and never that of bytes delivered as a view of it', async () => {
    const options = { largeMessageBytes: 16 * 1024 };
    const a = await startNode(options);
    const b = await startNode(options);
    nodes.push(a, b);
    const kept: unknown[] = [];
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        const m = ctx.message;
        if (!(m instanceof Uint8Array) && typeof (m as { s?: unknown }).s !== 'string') return;
        kept.push(m);
        if (ctx.sender) ctx.respond(kept.length);
      }),
      'keeper',
    );
    const target = new PID(b.address, 'keeper');
    const ask = (m: unknown): Promise<unknown> =>
      a.system.root.request(target, m, { timeoutMs: 20_000 });
    // Bytes first: the payload the keeper holds is a view of the frame it was joined in. Were
    // that memory given back, the smaller JSON frames after it would be joined over it.
    const bytes = Buffer.allocUnsafe(400 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 13 + (i >>> 9)) & 255;
    await ask(bytes);
    const texts = ['a', 'b', 'c', 'd'].map((c, k) => c.repeat(150 * 1024 + k * 1000));
    for (const s of texts) await ask({ s });
    expect(Buffer.from(kept[0] as Uint8Array).equals(bytes), 'the bytes are intact').to.equal(true);
    texts.forEach((s, k) => {
      expect((kept[k + 1] as { s: string }).s === s, `JSON message ${k} intact`).to.equal(true);
    });
    expect(
      ASSEMBLY_BUFFERS.spareBytes,
      'the JSON frames’ memory was given back for the next frame',
    ).to.be.at.least(150 * 1024);
  });
});
