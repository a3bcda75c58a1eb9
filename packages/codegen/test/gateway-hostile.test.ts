import * as http2 from 'node:http2';
import * as net from 'node:net';
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { InvalidOptionError } from '@granary/core';
import { NON_GRPC_PAYLOADS, closedAfter, openFds } from '@granary/testkit';
import type { Cluster } from '@granary/cluster';
import { ERROR_CODE_TRAILER, GrpcGateway } from '../src/gateway';
import { CalculatorGrain } from './golden/e2e/calculator.granary';
import { DIVIDE, divide, startDivideMember } from './helpers/divide-member';

/** How a raw HTTP/2 call ended: its grpc-status and Granary error code. */
interface Ended {
  status: string;
  code: string;
}

/**
 * A gRPC call as a hostile client makes it: the 5-byte prefix announcing a message of
 * `statedBytes`, then only `sentBytes` of it, and no end of stream.
 */
function partialCall(session: http2.ClientHttp2Session, statedBytes: number, sentBytes: number) {
  const req = session.request({
    ':method': 'POST',
    ':path': DIVIDE,
    'content-type': 'application/grpc',
    te: 'trailers',
    'granary-identity': 'x',
  });
  req.on('error', () => undefined);
  // The status comes in the headers (trailers-only) or the trailers; the stream stays open on
  // this side (it never ends its request), so 'close' only comes with the session's end.
  const ended = new Promise<Ended>((resolve) => {
    const seen = (h: http2.IncomingHttpHeaders): void => {
      if (h['grpc-status'] === undefined) return;
      resolve({ status: String(h['grpc-status']), code: String(h[ERROR_CODE_TRAILER] ?? '') });
    };
    req.on('response', seen);
    req.on('trailers', seen);
    req.on('close', () => resolve({ status: 'closed', code: '' }));
  });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(statedBytes, 1);
  req.write(prefix);
  req.write(Buffer.alloc(sentBytes, 1));
  req.resume();
  return ended;
}

// What any client that reaches a gateway can do: the gateway serves every gRPC client, and TLS
// server credentials authenticate no client.
describe('GrpcGateway against a hostile client', function () {
  this.timeout(30_000);
  let member: Cluster;
  let gateway: GrpcGateway;

  before(async () => {
    member = await startDivideMember('gateway-hostile', 'gh-1');
    gateway = await GrpcGateway.start({
      cluster: member,
      services: [CalculatorGrain.kindName],
      maxCallsReceiving: 2,
      receiveTimeoutMs: 1000,
      maxStreamsPerConnection: 8,
      idleConnectionTimeoutMs: 500,
    });
  });
  after(async () => {
    await gateway?.close();
    await member?.shutdown({ graceful: false });
  });

  it('ends calls whose request never arrives whole with RESOURCE_EXHAUSTED (receiveTimeoutMs), and serves others meanwhile', async () => {
    const session = http2.connect(`http://127.0.0.1:${gateway.port}`);
    session.on('error', () => undefined);
    const settings = await new Promise<http2.Settings>((r) => session.once('remoteSettings', r));
    expect(settings.maxConcurrentStreams).to.equal(8);
    // Before: each held 1 MiB of its 3 MiB message in the gateway for as long as it liked
    // (200 such calls on one connection: 82 -> 691 MiB), and none ever ended.
    const started = Date.now();
    const calls = Array.from({ length: 6 }, () =>
      partialCall(session, 3 * 1024 * 1024, 1024 * 1024),
    );
    const client = new grpc.Client(`127.0.0.1:${gateway.port}`, grpc.credentials.createInsecure());
    try {
      const reply = await divide(client);
      expect(reply.byteLength).to.be.greaterThan(0);
    } finally {
      client.close();
    }
    const ended = await Promise.all(calls);
    for (const e of ended) expect(e).to.deep.equal({ status: '8', code: 'ERR_GATEWAY_LIMIT' });
    expect(Date.now() - started).to.be.below(5000);
    session.close();
  });

  it('closes connections that open no call (idleConnectionTimeoutMs)', async () => {
    // Before: kept for ever, whether silent or past the HTTP/2 preface.
    const closed = Array.from({ length: 20 }, (_, i) => {
      const socket = net.connect(gateway.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.resume();
      if (i % 2 === 1) socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      return new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    });
    const started = Date.now();
    const at = await Promise.race([
      Promise.all(closed),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000)),
    ]);
    expect(at, 'every connection closed within 10 s').to.be.an('array');
    expect(Math.max(...at!) - started).to.be.below(5000);
  });

  it('closes HTTP/1, TLS and garbage at once, counts them, holds no descriptor, and serves clients meanwhile', async () => {
    for (const [what, payload] of NON_GRPC_PAYLOADS) {
      expect(await closedAfter(gateway.port, payload), what).to.be.below(2000);
    }
    const fds = openFds();
    const before = gateway.stats.closedBeforeUse;
    const floods = Array.from({ length: 200 }, (_, i) =>
      closedAfter(gateway.port, NON_GRPC_PAYLOADS[i % NON_GRPC_PAYLOADS.length]![1]),
    );
    const client = new grpc.Client(`127.0.0.1:${gateway.port}`, grpc.credentials.createInsecure());
    try {
      expect((await divide(client, 'after-http1')).byteLength).to.be.greaterThan(0);
    } finally {
      client.close();
    }
    await Promise.all(floods);
    // Counted (before: not at all), and nothing held past the flood.
    expect(gateway.stats.closedBeforeUse - before).to.equal(200);
    expect(openFds() - fds).to.be.at.most(10);
  });

  it('refuses a bound that is not a positive integer', async () => {
    for (const [option, value] of [
      ['maxCallsReceiving', 0],
      ['receiveTimeoutMs', '1000'],
      ['maxStreamsPerConnection', 1.5],
      ['idleConnectionTimeoutMs', -1],
    ] as const) {
      const err = await GrpcGateway.start({ cluster: member, [option]: value } as never).catch(
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', option);
    }
  });
});
