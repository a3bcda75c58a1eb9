import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { InvalidOptionError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { encodeChunk } from '../../src/remote/internal/link-frames';
import {
  CONNECT_METHOD,
  encodeFrame,
  type WireBatch,
  type WireEnvelope,
} from '../../src/remote/internal/wire';
import type { RawLink, TestNode } from './helpers';
import {
  helloFrame,
  rawConnect,
  rawHandshake,
  rejectionOf,
  startNode,
  stopNodes,
  until,
} from './helpers';

const echo = Props.fromFunc((ctx) => {
  if (ctx.sender) ctx.respond(ctx.message);
});

/** A batch frame as protobufjs encodes it; envelopes give their payload as `payload`. */
function batch(b: Partial<WireBatch>): Buffer {
  return encodeFrame({
    batch: {
      typeNames: ['bytes'],
      targetIds: ['echo'],
      senderAddresses: [],
      envelopes: [],
      ...b,
    } as WireBatch,
  });
}

/** `body` with gRPC's 5-byte message prefix (not compressed). */
function grpcMessage(body: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.byteLength, 1);
  return Buffer.concat([prefix, body]);
}

type RawEnvelope = WireEnvelope & { payload: Uint8Array };
const envelope = (fields: Partial<RawEnvelope> = {}): RawEnvelope =>
  ({ target: 0, type: 0, payload: Buffer.from('x'), ...fields }) as RawEnvelope;

describe('Remote inbound limits', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  const raws: RawLink[] = [];
  let b: TestNode;
  let a: TestNode;

  beforeEach(async () => {
    b = await startNode({
      maxMessageBytes: 64 * 1024,
      largeMessageBytes: 4096,
      limits: {
        maxFrameBytes: 128 * 1024,
        maxHandshakeBytes: 2048,
        maxEnvelopesPerFrame: 8,
        maxStringBytes: 256,
        maxHeaderEntries: 4,
        maxHeaderBytes: 512,
      },
    });
    a = await startNode();
    nodes.push(b, a);
    b.system.root.spawnNamed(echo, 'echo');
  });
  afterEach(async () => {
    for (const r of raws.splice(0)) r.close();
    await stopNodes(nodes);
  });

  async function authenticated(): Promise<RawLink> {
    const raw = rawConnect(b.address);
    raws.push(raw);
    expect(
      (await rawHandshake(raw, { memberId: `raw-${raws.length}` })).handshakeAck!.accepted,
    ).to.equal(true);
    return raw;
  }

  /** The other node is still served, and nobody else's link noticed. */
  async function stillServing(): Promise<void> {
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'ok', { timeoutMs: 5000 }),
    ).to.equal('ok');
  }

  it('refuses a first frame over maxHandshakeBytes before buffering it', async () => {
    const raw = rawConnect(b.address);
    raws.push(raw);
    raw.send(helloFrame({ memberId: 'x'.repeat(200), clusterName: 'y'.repeat(3000) }));
    const status = await raw.ended;
    expect(status.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
    await until(() => b.remote.stats.limitExceeded === 1, 5000, 'the limit to be counted');
    await stillServing();
  });

  const cases: Array<[string, () => Buffer, string]> = [
    [
      'a frame over maxFrameBytes',
      () => batch({ envelopes: [envelope({ payload: Buffer.alloc(200 * 1024) })] }),
      'limits.maxFrameBytes',
    ],
    [
      'more envelopes than maxEnvelopesPerFrame',
      () => batch({ envelopes: Array.from({ length: 9 }, () => envelope()) }),
      'limits.maxEnvelopesPerFrame',
    ],
    [
      'a table string over maxStringBytes',
      () => batch({ targetIds: ['t'.repeat(300)], envelopes: [envelope()] }),
      'limits.maxStringBytes',
    ],
    [
      'a sender id over maxStringBytes',
      () =>
        batch({
          senderAddresses: ['127.0.0.1:9'],
          envelopes: [envelope({ senderAddress: 1, senderId: 's'.repeat(300) })],
        }),
      'limits.maxStringBytes',
    ],
    [
      'more header entries than maxHeaderEntries',
      () =>
        batch({ envelopes: [envelope({ header: { a: '1', b: '2', c: '3', d: '4', e: '5' } })] }),
      'limits.maxHeaderEntries',
    ],
    [
      'header bytes over maxHeaderBytes',
      () => batch({ envelopes: [envelope({ header: { a: 'v'.repeat(600) } })] }),
      'limits.maxHeaderBytes',
    ],
    [
      'a message over maxMessageBytes',
      () => batch({ envelopes: [envelope({ payload: Buffer.alloc(70 * 1024) })] }),
      'maxMessageBytes',
    ],
  ];
  for (const [name, frame, option] of cases) {
    it(`closes the link of a peer that sends ${name}, naming ${option}`, async () => {
      const raw = await authenticated();
      raw.send(frame());
      const status = await raw.ended;
      expect(status.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      await until(() => b.remote.stats.limitExceeded === 1, 5000, 'the limit to be counted');
      const logged = b.logs.find(
        (l) => l.msg === 'remote peer exceeded a limit; its link is closed',
      );
      expect(logged?.fields.limit).to.equal(option);
      await stillServing();
    });
  }

  it('closes the link of a peer whose chunked frame states a size over maxMessageBytes', async () => {
    const raw = await authenticated();
    // The first chunk of a 1 MiB frame: one byte of it is enough to state the size.
    raw.send(encodeChunk(Buffer.alloc(1024 * 1024), 0, 1));
    const status = await raw.ended;
    expect(status.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).to.contain('(maxMessageBytes)');
    await stillServing();
  });

  it('checks options: a large-message threshold that leaves no room in a frame is refused', async () => {
    const err = await rejectionOf(
      startNode({ largeMessageBytes: 1024 * 1024, limits: { maxFrameBytes: 1024 * 1024 } }),
    );
    expect(err).to.be.instanceOf(InvalidOptionError);
    expect(err.message).to.contain('largeMessageBytes');
  });
});

describe('Remote connection limits', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await stopNodes(nodes);
  });

  function open(address: string, localAddress?: string): Promise<net.Socket> {
    const [host, port] = address.split(':');
    return new Promise((resolve, reject) => {
      const s = net.connect({ port: Number(port), host, localAddress }, () => resolve(s));
      s.resume(); // read, so the server's close is seen
      s.on('error', reject);
      sockets.push(s);
    });
  }
  const closed = (s: net.Socket): Promise<void> =>
    new Promise((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

  it('closes the oldest unauthenticated connection at maxPendingConnections, and members still get in', async () => {
    const b = await startNode({ limits: { maxPendingConnections: 3 } });
    const a = await startNode();
    nodes.push(b, a);
    b.system.root.spawnNamed(echo, 'echo');
    const first = await open(b.address);
    for (let i = 0; i < 3; i++) await open(b.address);
    await closed(first);
    expect(b.remote.stats.refusedConnections).to.be.at.least(1);
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'in', { timeoutMs: 5000 }),
    ).to.equal('in');
  });

  it('at maxPendingConnections closes the oldest of the source holding the most, not an earlier attempt from elsewhere', async () => {
    const b = await startNode({ limits: { maxPendingConnections: 3 } });
    nodes.push(b);
    const member = await open(b.address);
    const evicted = new Set<net.Socket>();
    member.once('close', () => evicted.add(member));
    const flood: net.Socket[] = [];
    // Another loopback address: a flood from one source while a member connects from another.
    for (let i = 0; i < 6; i++) {
      const s = await open(b.address, '127.0.0.2');
      s.once('close', () => evicted.add(s));
      flood.push(s);
    }
    await until(() => evicted.size === 4, 5000, 'four connections closed to make room');
    expect(evicted.has(member), 'the member attempt was closed').to.equal(false);
    expect(flood.slice(0, 4).every((s) => evicted.has(s))).to.equal(true);
    expect(b.remote.stats.refusedConnections).to.equal(4);
  });

  it('closes connections past maxConnections as they arrive', async () => {
    const b = await startNode({ limits: { maxConnections: 2 } });
    nodes.push(b);
    await open(b.address);
    await open(b.address);
    const third = await open(b.address);
    await closed(third);
    expect(b.remote.stats.refusedConnections).to.equal(1);
  });

  it('closes a connection with no authenticated link after idleConnectionTimeoutMs', async () => {
    const b = await startNode({ limits: { idleConnectionTimeoutMs: 200 } });
    nodes.push(b);
    const s = await open(b.address);
    await closed(s);
    expect(b.remote.stats.idleConnections).to.equal(1);
  });

  it('resets the stream and closes the connection of a peer whose handshake was refused', async () => {
    const b = await startNode({ limits: { idleConnectionTimeoutMs: 20_000 } });
    nodes.push(b);
    const session = http2.connect(`http://${b.address}`);
    session.on('error', () => undefined);
    const sessionClosed = new Promise<number>((resolve) => {
      const at = Date.now();
      session.once('close', () => resolve(Date.now() - at));
    });
    const req = session.request({
      ':method': 'POST',
      ':path': CONNECT_METHOD,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    req.on('error', () => undefined);
    // A proof before any hello: refused. The peer then keeps its half open and writing.
    req.write(grpcMessage(encodeFrame({ proof: { proof: Buffer.alloc(32) } })));
    const junk = grpcMessage(Buffer.alloc(1000, 0x0a));
    const pump = setInterval(() => req.writable && req.write(junk), 5);
    try {
      const closedAfter = await Promise.race([
        sessionClosed,
        new Promise<number>((resolve) => setTimeout(() => resolve(-1), 5000)),
      ]);
      expect(closedAfter, 'closed well before idleConnectionTimeoutMs').to.be.within(0, 5000);
    } finally {
      clearInterval(pump);
      session.destroy();
    }
    expect(b.remote.stats.refusedHandshakes).to.equal(1);
  });

  it('closes a stream that completes no handshake within handshakeTimeoutMs', async () => {
    const b = await startNode({ handshakeTimeoutMs: 200 });
    nodes.push(b);
    const raw = rawConnect(b.address);
    raw.send(helloFrame({ memberId: 'slow' }));
    const status = await raw.ended;
    raw.close();
    expect(status.code).to.equal(grpc.status.DEADLINE_EXCEEDED);
    expect(status.details).to.contain('handshakeTimeoutMs');
    expect(b.remote.stats.refusedHandshakes).to.equal(1);
  });
});
