import { expect } from 'chai';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { RECEIVE_BUFFERS } from '../../src/remote/internal/grpc-decoder';
import { FRAMED_IN_PLACE } from '../../src/remote/internal/grpc-frames';
import type { TestNode } from './helpers';
import { startNode, stopNodes, until } from './helpers';

const MIB = 1024 * 1024;
/** A 1 MiB message goes in 64 KiB chunks (largeMessageBytes' default): 16 and a short one. */
const CHUNKS_PER_MIB = 16;

function pattern(k: number): Buffer {
  const m = Buffer.allocUnsafe(MIB);
  for (let i = 0; i < MIB; i++) m[i] = (i * 31 + k * 17 + (i >>> 10)) & 255;
  return m;
}

/**
 * The link's fast path through grpc-js (grpc-fast-path): chunks framed in place instead of
 * copied, large incoming messages joined in reused memory. It reaches private objects of the
 * installed grpc-js; if an update moves them the link still works (with grpc-js' copies), and
 * only this test says so. One direction at a time, so each side's path is checked: the dialling
 * side sends and the accepting side receives, then the other way over the same link.
 */
describe('Remote link fast path through grpc-js (installed version)', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  it('frames chunks in place and receives them into reused memory, on the dialling and the accepting side', async () => {
    const a = await startNode();
    const b = await startNode();
    nodes.push(a, b);
    const received: Uint8Array[] = [];
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        const m = ctx.message;
        if (m instanceof Uint8Array) received.push(m);
        // A small request asks for a large reply, which goes back over the same link.
        if (typeof m === 'number' && ctx.sender) ctx.respond(pattern(m));
        if (typeof m === 'string' && ctx.sender) ctx.respond(m);
      }),
      'sink',
    );
    const sink = new PID(b.address, 'sink');
    await a.system.root.request(sink, 'warm', { timeoutMs: 10_000 }); // the link is up

    // Dialling side sends, accepting side receives.
    let framed = FRAMED_IN_PLACE.count;
    let given = RECEIVE_BUFFERS.given;
    const sent = [1, 2, 3].map(pattern);
    for (const m of sent) a.system.root.send(sink, m);
    await until(() => received.length === 3, 20_000, 'three 1 MiB messages at the accepting side');
    received.forEach((m, k) =>
      expect(Buffer.from(m).equals(sent[k]!), `message ${k} intact`).to.equal(true),
    );
    expect(
      FRAMED_IN_PLACE.count - framed,
      'chunks the dialling side framed in place (grpc-js copied them instead: its client call changed shape)',
    ).to.be.at.least(3 * CHUNKS_PER_MIB);
    expect(
      RECEIVE_BUFFERS.given - given,
      'chunks the accepting side received into reused memory (grpc-js joined them itself: its server decoder changed shape)',
    ).to.be.at.least(3 * CHUNKS_PER_MIB);

    // Accepting side sends (replies over the link it accepted), dialling side receives.
    framed = FRAMED_IN_PLACE.count;
    given = RECEIVE_BUFFERS.given;
    for (const k of [4, 5, 6]) {
      const reply = await a.system.root.request<Uint8Array>(sink, k, { timeoutMs: 20_000 });
      expect(Buffer.from(reply).equals(pattern(k)), `reply ${k} intact`).to.equal(true);
    }
    expect(
      FRAMED_IN_PLACE.count - framed,
      'chunks the accepting side framed in place (grpc-js copied them instead: its server call changed shape)',
    ).to.be.at.least(3 * CHUNKS_PER_MIB);
    expect(
      RECEIVE_BUFFERS.given - given,
      'chunks the dialling side received into reused memory (grpc-js joined them itself: its client call changed shape)',
    ).to.be.at.least(3 * CHUNKS_PER_MIB);
  });
});
