import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { InvalidOptionError, type Logger } from '@granary/core';
import type { Cluster } from '@granary/cluster';
import { openFds } from '@granary/testkit';
import { GrpcGateway } from '../src/gateway';
import { CalculatorGrain } from './golden/e2e/calculator.granary';
import { divide, startDivideMember } from './helpers/divide-member';

const CAP = 20;
const FLOOD = 600;

/** A throwaway self-signed certificate for 127.0.0.1 (EC P-256, one day). */
function selfSigned(): { cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
        ...['-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', '/CN=localhost'],
        ...['-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'c.pem')), key: readFileSync(join(dir, 'k.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Opens a raw socket (every other one sends the HTTP/2 preface); resolves when it is closed. */
function rawSocket(port: number, i: number, open: Set<net.Socket>): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  open.add(socket);
  socket.on('error', () => undefined);
  socket.resume();
  if (i % 2 === 1) socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
  return new Promise<void>((resolve) =>
    socket.on('close', () => {
      open.delete(socket);
      resolve();
    }),
  );
}

// A client opening sockets faster than idleConnectionTimeoutMs closes them: each is a file
// descriptor of the member's process.
describe('GrpcGateway against a connection flood', function () {
  this.timeout(60_000);
  let member: Cluster;
  let gateway: GrpcGateway;
  const warned: unknown[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj: object | string) => void warned.push(obj),
    error: () => undefined,
    child: () => logger,
  } as unknown as Logger;

  before(async () => {
    member = await startDivideMember('gateway-connections', 'gc-1');
    gateway = await GrpcGateway.start({
      cluster: member,
      services: [CalculatorGrain.kindName],
      maxConnections: CAP,
      logger,
    });
  });
  after(async () => {
    await gateway?.close();
    await member?.shutdown({ graceful: false });
  });

  it('holds at most maxConnections through a flood, and serves its clients meanwhile', async () => {
    const client = new grpc.Client(`127.0.0.1:${gateway.port}`, grpc.credentials.createInsecure());
    const open = new Set<net.Socket>();
    try {
      expect((await divide(client)).byteLength).to.be.greaterThan(0);
      const fdsBefore = openFds();
      // Before: all 600 were kept (by grpc-js until idleConnectionTimeoutMs, 60 s), 1,200 fds
      // in this process (both ends); now the gateway holds CAP - 1 of them beside the client.
      const closed = Array.from({ length: FLOOD }, (_, i) => rawSocket(gateway.port, i, open));
      const refused = FLOOD - (CAP - 1);
      const settled = await Promise.race([
        Promise.all(closed.map((c) => c.then(() => 1))).then(() => FLOOD),
        new Promise<number>((resolve) => {
          const poll = setInterval(() => {
            if (FLOOD - open.size < refused) return;
            clearInterval(poll);
            resolve(FLOOD - open.size);
          }, 20);
          setTimeout(() => {
            clearInterval(poll);
            resolve(FLOOD - open.size);
          }, 10_000).unref();
        }),
      ]);
      expect(settled, 'flood sockets the gateway closed within 10 s').to.equal(refused);
      expect(open.size).to.equal(CAP - 1);
      // Both ends of the sockets still open, and a few the runtime opened meanwhile.
      expect(openFds() - fdsBefore).to.be.at.most(2 * (CAP - 1) + 10);
      expect(gateway.stats).to.deep.equal({
        connections: CAP,
        refusedConnections: refused,
        closedBeforeUse: 0,
      });
      // Throttled: one line for the first refusal, the rest counted for the summary.
      expect(warned).to.have.length(1);
      expect(warned[0]).to.include({ event: 'refusedConnections', limit: 'maxConnections' });

      // The client connected before the flood (it made a call: never evicted) is served.
      expect((await divide(client)).byteLength).to.be.greaterThan(0);
      // Once the flood's sockets close, a new client gets in.
      for (const s of open) s.destroy();
      await Promise.all(closed);
      const late = new grpc.Client(`127.0.0.1:${gateway.port}`, grpc.credentials.createInsecure());
      try {
        expect((await divide(late)).byteLength).to.be.greaterThan(0);
      } finally {
        late.close();
      }
    } finally {
      for (const s of open) s.destroy();
      client.close();
    }
  });

  it('lets a new client in while silent and trickling sockets hold every connection', async () => {
    const own = await GrpcGateway.start({
      cluster: member,
      services: [CalculatorGrain.kindName],
      maxConnections: CAP,
      logger,
    });
    const open = new Set<net.Socket>();
    const first = new grpc.Client(`127.0.0.1:${own.port}`, grpc.credentials.createInsecure());
    // Its own connection: grpc-js shares one between clients of one target by default.
    const late = new grpc.Client(`127.0.0.1:${own.port}`, grpc.credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    try {
      expect((await divide(first)).byteLength).to.be.greaterThan(0);
      const channel = first.getChannel();
      let left = false;
      const watch = (): void =>
        channel.watchConnectivityState(channel.getConnectivityState(false), Infinity, () => {
          if (channel.getConnectivityState(false) !== grpc.connectivityState.READY) left = true;
          else watch();
        });
      watch();
      // Every other connection: silent ones, and ones that send the HTTP/2 preface and no call.
      const floods = Array.from({ length: 3 * CAP }, (_, i) => rawSocket(own.port, i, open));
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (open.size > CAP - 1 || own.stats.connections < CAP) return;
          clearInterval(poll);
          resolve();
        }, 20);
      });
      expect(own.stats.connections).to.equal(CAP);
      // Before: a new client was closed as it arrived until idleConnectionTimeoutMs (60 s)
      // closed a flood socket; now it takes the place of the oldest socket that made no call.
      expect((await divide(late)).byteLength).to.be.greaterThan(0);
      expect(own.stats.connections).to.equal(CAP);
      // The client that had made a call kept its connection through the flood.
      expect((await divide(first)).byteLength).to.be.greaterThan(0);
      expect(left, 'the first client lost its connection').to.equal(false);
      for (const s of open) s.destroy();
      await Promise.all(floods);
    } finally {
      for (const s of open) s.destroy();
      first.close();
      late.close();
      await own.close();
    }
  });

  it('serves TLS clients through the guard (its credentials reach grpc-js)', async () => {
    const { cert, key } = selfSigned();
    const tls = await GrpcGateway.start({
      cluster: member,
      services: [CalculatorGrain.kindName],
      credentials: grpc.ServerCredentials.createSsl(null, [{ cert_chain: cert, private_key: key }]),
      logger,
    });
    const client = new grpc.Client(`127.0.0.1:${tls.port}`, grpc.credentials.createSsl(cert), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    try {
      expect((await divide(client)).byteLength).to.be.greaterThan(0);
    } finally {
      client.close();
      await tls.close();
    }
  });

  it('closes TLS connections that never finish a handshake or speak no gRPC within idleConnectionTimeoutMs', async () => {
    const { cert, key } = selfSigned();
    const own = await GrpcGateway.start({
      cluster: member,
      services: [CalculatorGrain.kindName],
      credentials: grpc.ServerCredentials.createSsl(null, [{ cert_chain: cert, private_key: key }]),
      idleConnectionTimeoutMs: 500,
      logger,
    });
    const client = new grpc.Client(`127.0.0.1:${own.port}`, grpc.credentials.createSsl(cert), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    const sockets: net.Socket[] = [];
    try {
      const closed = Array.from({ length: 10 }, (_, i) => {
        // Silent TCP (no ClientHello), or TLS without ALPN sending HTTP/1.
        const socket =
          i % 2 === 0
            ? net.connect(own.port, '127.0.0.1')
            : tls.connect({ port: own.port, host: '127.0.0.1', rejectUnauthorized: false }, () =>
                socket.write('GET / HTTP/1.1\r\nHost: gateway\r\n\r\n'),
              );
        sockets.push(socket);
        socket.on('error', () => undefined);
        socket.resume();
        return new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
      });
      const started = Date.now();
      // Before: the silent ones were held for Node's TLS handshakeTimeout (120 s), the others 10 s.
      const at = await Promise.race([
        Promise.all(closed),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 8000)),
      ]);
      expect(at, 'every connection closed within 8 s').to.be.an('array');
      expect(Math.max(...at!) - started).to.be.below(5000);
      expect((await divide(client)).byteLength).to.be.greaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
      client.close();
      await own.close();
    }
  });

  it('refuses a maxConnections that is not a positive integer', async () => {
    for (const value of [0, 1.5, '10']) {
      const err = await GrpcGateway.start({
        cluster: member,
        maxConnections: value as number,
      }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'maxConnections');
    }
  });
});
