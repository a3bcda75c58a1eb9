import { expect } from 'chai';
import { SYSTEM_CLOCK } from '../../src/clock';
import { LinkSender } from '../../src/remote/internal/link-sender';
import type { LinkSenderHost } from '../../src/remote/internal/link-sender-host';
import { FRAME_CHUNK_TAG } from '../../src/remote/internal/link-frames';
import type { LinkListener } from '../../src/remote/internal/link-types';
import type { OutboundEnvelope } from '../../src/remote/internal/outbound-envelope';
import type { StreamLink } from '../../src/remote/internal/stream-link';
import { decodeFrame } from '../../src/remote/internal/wire';

/** The parts of a StreamLink a sender uses; each write's completion is the test's to call. */
class FakeLink {
  readonly peerAddress = 'peer:1';
  isClosed = false;
  isBlocked = false;
  outstandingBytes = 0;
  /** What was written, in order: 'chunk', or the target ids of a batch frame. */
  readonly written: string[] = [];
  readonly pending: Array<() => void> = [];
  listen(_l: LinkListener): void {}
  uncreditedForMs(): number {
    return 0;
  }
  notReading(): void {}
  write(frame: Buffer, done?: () => void): boolean {
    if (frame[0] === FRAME_CHUNK_TAG) this.written.push('chunk');
    else {
      const batch = decodeFrame(frame).batch!;
      this.written.push(batch.envelopes.map((e) => batch.targetIds[e.target]!).join('+'));
    }
    if (done) this.pending.push(done);
    return true;
  }
}

const envelope = (targetId: string, bytes: number): OutboundEnvelope => ({
  targetId,
  typeName: 't',
  format: 0,
  payload: new Uint8Array(bytes),
  urgent: false,
  message: targetId,
});

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LinkSender: chunks of a large message and the small batches between them', () => {
  it('writes the small envelopes batched in the turn a chunk completes before the next chunk, never behind it', async () => {
    const host: LinkSenderHost = {
      clock: SYSTEM_CLOCK,
      batchSize: 100,
      largeMessageBytes: 64 * 1024, // one chunk of it is all a link has in flight
      maxLargeBytesInFlight: 1 << 20,
      maxOutboundBytes: 1 << 20,
      reject: () => undefined,
      backpressure: () => undefined,
      abandoned: () => false,
      expired: () => undefined,
    };
    const link = new FakeLink();
    const sender = new LinkSender(link as unknown as StreamLink, host);
    sender.send(envelope('big', 200_000)); // 4 chunks of at most 64 KiB, one written at a time
    expect(link.written, 'the first chunk at once').to.deep.equal(['chunk']);
    for (let i = 1; i <= 3; i++) {
      // The loop polls: the chunk's write completes and a reply arrives that sends small ones.
      link.pending.shift()!();
      sender.send(envelope(`small-${i}a`, 10));
      sender.send(envelope(`small-${i}b`, 10));
      await turn();
      await turn();
      expect(
        link.written.slice(-2),
        `after chunk ${i} completed, the small ones sent in that turn go before chunk ${i + 1}: ${link.written.join(', ')}`,
      ).to.deep.equal([`small-${i}a+small-${i}b`, 'chunk']);
    }
    expect(link.written.filter((w) => w === 'chunk').length, 'every chunk written').to.equal(4);
    link.pending.shift()!();
  });
});
