import { expect } from 'chai';
import { SYSTEM_CLOCK, type Clock } from '../../src/clock';
import { LinkSender } from '../../src/remote/internal/link-sender';
import type { LinkSenderHost } from '../../src/remote/internal/link-sender-host';
import type { LinkListener } from '../../src/remote/internal/link-types';
import type { OutboundEnvelope } from '../../src/remote/internal/outbound-envelope';
import type { StreamLink } from '../../src/remote/internal/stream-link';
import { decodeFrame } from '../../src/remote/internal/wire';

/** The parts of a StreamLink a sender uses: it blocks after a write while `full` is set. */
class FakeLink {
  readonly peerAddress = 'peer:1';
  isClosed = false;
  isBlocked = false;
  full = false;
  readonly frames: Buffer[] = [];
  listener: LinkListener | undefined;
  /** Uncredited bytes, how long the peer credited nothing, and why the link was closed. */
  outstandingBytes = 0;
  silentMs = 0;
  notReadingDetail: string | undefined;
  uncreditedForMs(): number {
    return this.silentMs;
  }
  notReading(detail: string): void {
    this.notReadingDetail = detail;
    this.isClosed = true;
    this.listener!.linkClosed(new Error(detail));
  }
  listen(l: LinkListener): void {
    this.listener = l;
  }
  /** Set: the next write finds the stream stuck and closes the link from inside write. */
  closeOnWrite: Error | undefined;
  write(frame: Buffer): boolean {
    this.frames.push(frame);
    const lost = this.closeOnWrite;
    if (lost !== undefined) {
      this.closeOnWrite = undefined;
      this.isClosed = true;
      this.listener!.linkClosed(lost);
      return false;
    }
    if (this.full) this.isBlocked = true;
    return true;
  }
  /** The stream drained. */
  drain(): void {
    this.isBlocked = false;
    this.listener!.writable();
  }
  /** Target ids of each frame written, in order. */
  sent(): string[][] {
    return this.frames.map((bytes) => {
      const batch = decodeFrame(bytes).batch!;
      return batch.envelopes.map((env) => batch.targetIds[env.target]!);
    });
  }
}

const envelope = (targetId: string, deadline?: number): OutboundEnvelope => ({
  targetId,
  typeName: 't',
  format: 0,
  payload: new Uint8Array([1]),
  urgent: false,
  deadline,
  message: targetId,
});

describe('LinkSender: a blocked link', () => {
  let now: number;
  let link: FakeLink;
  let sender: LinkSender;
  let expired: string[];
  let rejected: string[];
  const gone = new Set<string>();

  beforeEach(() => {
    now = 1_000_000;
    expired = [];
    rejected = [];
    gone.clear();
    const clock: Clock = { ...SYSTEM_CLOCK, now: () => now };
    const host: LinkSenderHost = {
      clock,
      batchSize: 2,
      largeMessageBytes: 1 << 20,
      maxLargeBytesInFlight: 1 << 20,
      maxOutboundBytes: 4096,
      reject: (_address, env) => void rejected.push(env.targetId),
      backpressure: () => undefined,
      abandoned: (env) => gone.has(env.targetId),
      expired: (env) => void expired.push(env.targetId),
    };
    link = new FakeLink();
    sender = new LinkSender(link as unknown as StreamLink, host);
  });

  it('holds small envelopes unencoded while blocked; on drain drops the requests whose deadline passed or whose requester is gone', () => {
    link.full = true;
    sender.send(envelope('a', now + 1000));
    sender.send(envelope('b', now + 1000)); // a full batch: written, and now the link is blocked
    sender.send(envelope('late', now + 50));
    sender.send(envelope('cancelled', now + 1000));
    sender.send(envelope('tell')); // no deadline: never dropped for it
    sender.send(envelope('c', now + 1000));
    expect(link.sent()).to.deep.equal([['a', 'b']]);
    now += 100;
    gone.add('cancelled');
    link.full = false;
    link.drain();
    expect(link.sent()).to.deep.equal([
      ['a', 'b'],
      ['tell', 'c'],
    ]);
    expect(expired).to.deep.equal(['late']);
    // The deadline went out as the time left when the frame was encoded, after the wait.
    expect(decodeFrame(link.frames[1]!).batch!.envelopes[1]!.timeoutMs).to.equal(900);
  });

  it('sends what waits only until the link blocks again, in order', () => {
    link.full = true;
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) sender.send(envelope(id));
    expect(link.sent()).to.deep.equal([['a', 'b']]);
    link.drain(); // still full: one more frame, then it waits again
    expect(link.sent()).to.deep.equal([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    link.full = false;
    link.drain();
    expect(link.sent()).to.deep.equal([
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'f'],
    ]);
  });

  it('writes everything that waits on flushAll (an orderly end), and rejects it when the link is lost', () => {
    link.full = true;
    for (const id of ['a', 'b', 'c', 'd', 'e']) sender.send(envelope(id));
    sender.flushAll();
    expect(link.sent().flat()).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    for (const id of ['f', 'g']) sender.send(envelope(id));
    sender.linkClosed(new Error('lost'));
    expect(rejected).to.deep.equal(['f', 'g']);
  });

  it('rejects each waiting envelope once when a write made while draining the backlog closes the link', () => {
    // StreamLink closes the link from inside write (a stuck stream): close runs while the
    // backlog is being batched, and must see neither the envelope in hand nor a sent slot.
    link.full = true;
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) sender.send(envelope(id));
    expect(link.sent()).to.deep.equal([['a', 'b']]);
    link.full = false;
    link.closeOnWrite = new Error('stuck');
    link.drain(); // batches c, d: the write of that frame closes the link
    expect(link.sent().flat()).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(rejected).to.deep.equal(['e', 'f', 'g']);
    sender.send(envelope('h')); // after close: rejected, not kept
    expect(rejected).to.deep.equal(['e', 'f', 'g', 'h']);
  });

  it('keeps the backlog of a peer that reads slower than we send, past maxOutboundBytes', () => {
    link.full = true;
    link.outstandingBytes = 3000;
    link.silentMs = 20; // it credits: it reads
    for (let i = 0; i < 100; i++) sender.send(envelope(`m${i}`)); // ~13 KiB waiting
    expect(link.notReadingDetail).to.equal(undefined);
    expect(rejected).to.deep.equal([]);
    link.full = false;
    link.drain();
    expect(link.sent().flat()).to.have.length(100);
  });

  it('closes the link of a peer that credits but has four times maxOutboundBytes held for it', () => {
    link.full = true;
    link.outstandingBytes = 3000;
    link.silentMs = 20; // it credits a little, often: credit is the peer's word
    for (let i = 0; i < 200; i++) sender.send(envelope(`m${i}`));
    // Waiting: 129 bytes each, until written + waiting pass 4 x 4096.
    expect(link.notReadingDetail).to.match(/held for it .* over 4 times the limit/);
    expect(rejected.length).to.be.greaterThan(0);
    expect(rejected.length + link.sent().flat().length).to.equal(200);
  });

  it('closes the link of a peer that credits nothing while maxOutboundBytes are held for it, rejecting what waits', () => {
    link.full = true;
    link.outstandingBytes = 3000;
    link.silentMs = 300;
    for (let i = 0; i < 20; i++) sender.send(envelope(`m${i}`));
    // Written: the first batch; waiting: 129 bytes each, until written + waiting pass 4096.
    expect(link.notReadingDetail).to.match(/held for it .* credited none for 300 ms/);
    expect(link.sent().flat()).to.deep.equal(['m0', 'm1']);
    expect(rejected).to.deep.equal(Array.from({ length: 18 }, (_, i) => `m${i + 2}`));
  });
});
