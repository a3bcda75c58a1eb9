import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { EndpointUnavailableError, HandshakeError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import {
  CONNECT_METHOD,
  PROTOCOL_VERSION,
  decodeFrame,
  encodeFrame,
} from '../../src/remote/internal/wire';
import type { WireFrame } from '../../src/remote/internal/wire';
import type { TestNode } from './helpers';
import { helloFrame, rawConnect, rawHandshake, rejectionOf, startNode, stopNodes } from './helpers';

const echo = Props.fromFunc((ctx) => ctx.respond(ctx.message));
const SECRET = 'the-shared-secret-of-the-cluster';
const OTHER_SECRET = 'not-the-secret-of-this-cluster!!';

/** A node's `sink` actor, counting the strings it receives. */
function sink(node: TestNode): { delivered: () => number } {
  let delivered = 0;
  node.system.root.spawnNamed(
    Props.fromFunc((ctx) => void (typeof ctx.message === 'string' && delivered++)),
    'sink',
  );
  return { delivered: () => delivered };
}

describe('Remote handshake', function () {
  this.timeout(20000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  async function pair(aOptions: object, bOptions: object): Promise<[TestNode, TestNode]> {
    const a = await startNode(aOptions);
    const b = await startNode(bOptions);
    nodes.push(a, b);
    return [a, b];
  }

  it('refuses a peer of another cluster name on both sides, and delivers nothing', async () => {
    const [a, b] = await pair({ clusterName: 'blue' }, { clusterName: 'green' });
    const s = sink(b);
    a.system.root.send(new PID(b.address, 'sink'), 'first');
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'sink'), 'x', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    const cause = (err as Error).cause as HandshakeError;
    expect(cause).to.be.instanceOf(HandshakeError);
    expect(cause.refusal).to.equal('cluster-name');
    expect(cause.retryable).to.equal(false);
    expect(err.message).to.contain("cluster name 'blue' does not match 'green' (clusterName)");
    expect(b.remote.stats.refusedHandshakes).to.equal(1);
    expect(
      b.logs.some((l) => l.level === 'error' && l.msg === 'remote handshake refused'),
    ).to.equal(true);
    expect(
      a.logs.some((l) => l.level === 'error' && l.msg === 'remote handshake refused by peer'),
    ).to.equal(true);
    expect(s.delivered()).to.equal(0);
  });

  it('refuses a peer that proves another secret, and delivers nothing', async () => {
    const [a, b] = await pair({ secret: OTHER_SECRET }, { secret: SECRET });
    const s = sink(b);
    a.system.root.send(new PID(b.address, 'sink'), 'first');
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'sink'), 'x', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect(((err as Error).cause as HandshakeError).refusal).to.equal('authentication');
    // Said from the refused side: it is our secret that did not pass.
    expect(err.message).to.contain(
      `${b.address} refused our handshake: it did not accept our proof of the shared secret (secret: ours is missing or not the one it has)`,
    );
    expect(b.remote.stats.refusedHandshakes).to.equal(1);
    expect(s.delivered()).to.equal(0);
  });

  it('refuses a peer without the secret the node has', async () => {
    const [a, b] = await pair({}, { secret: SECRET });
    b.system.root.spawnNamed(echo, 'echo');
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'echo'), 'x', { timeoutMs: 5000 }),
    );
    expect(((err as Error).cause as HandshakeError).refusal).to.equal('authentication');
  });

  it('does not talk to a node that cannot prove the secret this node has', async () => {
    const [a, b] = await pair({ secret: SECRET }, {});
    b.system.root.spawnNamed(echo, 'echo');
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'echo'), 'x', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    const cause = (err as Error).cause as HandshakeError;
    expect(cause.refusal).to.equal('authentication');
    expect(cause.message).to.contain(`handshake with ${b.address} failed`);
  });

  it('accepts a peer with the same cluster name and secret', async () => {
    const [a, b] = await pair(
      { clusterName: 'c', secret: SECRET },
      { clusterName: 'c', secret: SECRET },
    );
    b.system.root.spawnNamed(echo, 'echo');
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'hi', { timeoutMs: 5000 }),
    ).to.equal('hi');
  });

  it('never sends the secret: a listener sees only nonces, identities and HMACs', async () => {
    const seen: Buffer[] = [];
    const server = new grpc.Server();
    const id = (b: Buffer): Buffer => b;
    server.addService(
      {
        Connect: {
          path: CONNECT_METHOD,
          requestStream: true,
          responseStream: true,
          requestSerialize: id,
          requestDeserialize: id,
          responseSerialize: id,
          responseDeserialize: id,
        },
      },
      {
        Connect: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          call.on('data', (b: Buffer) => {
            seen.push(b);
            const frame = decodeFrame(b);
            if (frame.handshake) {
              call.write(
                encodeFrame({
                  challenge: { nonce: Buffer.alloc(32, 7), memberId: 'spy', address },
                }),
              );
            }
          });
          call.on('error', () => undefined);
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    const address = `127.0.0.1:${port}`;
    const a = await startNode({ secret: SECRET, connectTimeoutMs: 1000 });
    nodes.push(a);
    await rejectionOf(a.system.root.request(new PID(address, 'x'), 'hi', { timeoutMs: 5000 }));
    server.forceShutdown();
    const frames = seen.map((b) => decodeFrame(b));
    expect(
      frames.map((f) => Object.keys(f).find((k) => f[k as keyof WireFrame])),
      'frames',
    ).to.deep.equal(['handshake', 'proof']);
    expect(frames[1]!.proof!.proof.byteLength).to.equal(32);
    for (const bytes of seen) {
      expect(bytes.includes(Buffer.from(SECRET)), 'the secret in a frame').to.equal(false);
    }
  });

  it('refuses a replayed proof: the server nonce differs on every handshake', async () => {
    const b = await startNode({ secret: SECRET });
    nodes.push(b);
    const first = rawConnect(b.address);
    const hello = helloFrame({ address: '127.0.0.1:9', memberId: 'replayer' });
    const ack = await rawHandshake(first, hello.handshake, SECRET);
    expect(ack.handshakeAck!.accepted).to.equal(true);
    first.close();
    // A recording of that exchange, replayed: same hello, a proof made for the old nonce.
    const second = rawConnect(b.address);
    second.send(hello);
    const challenge = await second.next();
    expect(challenge.challenge).to.not.equal(undefined);
    second.send({ proof: { proof: Buffer.alloc(32, 1) } });
    const refused = await second.next();
    second.close();
    expect(refused.handshakeAck!.accepted).to.equal(false);
    expect(refused.handshakeAck!.refusal).to.equal('authentication');
  });

  it('refuses another protocol version with the reason in the ack', async () => {
    const b = await startNode();
    nodes.push(b);
    const raw = rawConnect(b.address);
    raw.send(helloFrame({ memberId: 'old', protocolVersion: PROTOCOL_VERSION + 1 }));
    const status = await raw.ended;
    raw.close();
    expect(status.details).to.contain('protocol version');
    expect(raw.frames).to.have.length(1);
    expect(raw.frames[0]!.handshakeAck!.accepted).to.equal(false);
    expect(raw.frames[0]!.handshakeAck!.refusal).to.equal('protocol-version');
    expect(raw.frames[0]!.handshakeAck!.reason).to.contain(`this node speaks ${PROTOCOL_VERSION}`);
  });

  it('refuses anything but the handshake before authentication, delivering nothing', async () => {
    const b = await startNode();
    nodes.push(b);
    const s = sink(b);
    const batch = encodeFrame({
      batch: {
        typeNames: ['json'],
        targetIds: ['sink'],
        senderAddresses: [],
        envelopes: [
          {
            target: 0,
            type: 0,
            format: 1,
            bytes: Buffer.from('"sneaked in"'),
            start: 0,
            end: 12,
            senderAddress: 0,
            senderId: '',
            urgent: false,
            timeoutMs: 0,
          },
        ],
      },
    });
    // A batch instead of the hello, then a batch instead of the proof.
    const first = rawConnect(b.address);
    first.send(Buffer.from(batch));
    expect((await first.next()).handshakeAck!.refusal).to.equal('malformed');
    first.close();
    const second = rawConnect(b.address);
    second.send(helloFrame({ memberId: 'sneaky' }));
    expect((await second.next()).challenge).to.not.equal(undefined);
    second.send(Buffer.from(batch));
    expect((await second.next()).handshakeAck!.refusal).to.equal('malformed');
    second.close();
    expect(s.delivered()).to.equal(0);
    expect(b.remote.stats.refusedHandshakes).to.equal(2);
  });

  it('refuses a second live link that states an address or member id already linked', async () => {
    const b = await startNode();
    nodes.push(b);
    const first = rawConnect(b.address);
    const ok = await rawHandshake(first, { address: '127.0.0.1:9', memberId: 'm-1' });
    expect(ok.handshakeAck!.accepted).to.equal(true);
    for (const fields of [
      { address: '127.0.0.1:9', memberId: 'm-2' },
      { address: '127.0.0.1:10', memberId: 'm-1' },
    ]) {
      const twin = rawConnect(b.address);
      const refused = await rawHandshake(twin, fields);
      twin.close();
      expect(refused.handshakeAck!.refusal, JSON.stringify(fields)).to.equal('duplicate');
    }
    first.close();
    await first.ended;
    // Once the first link is gone, the identity is free again.
    let again: WireFrame | undefined;
    for (let i = 0; i < 50 && !again?.handshakeAck?.accepted; i++) {
      const next = rawConnect(b.address);
      again = await rawHandshake(next, { address: '127.0.0.1:9', memberId: 'm-1' });
      next.close();
      if (!again.handshakeAck?.accepted) await new Promise((r) => setTimeout(r, 20));
    }
    expect(again!.handshakeAck!.accepted).to.equal(true);
  });

  it("refuses a peer impersonating a live member's address, which keeps being served", async () => {
    const [a, b] = await pair({}, {});
    b.system.root.spawnNamed(echo, 'echo');
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 1, { timeoutMs: 5000 }),
    ).to.equal(1);
    const impostor = rawConnect(b.address);
    const refused = await rawHandshake(impostor, { address: a.address, memberId: 'impostor' });
    impostor.close();
    expect(refused.handshakeAck!.refusal).to.equal('duplicate');
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 2, { timeoutMs: 5000 }),
    ).to.equal(2);
  });

  it('refuses a node that states another address than the one dialled', async () => {
    const b = await startNode({ advertisedHost: 'localhost' });
    nodes.push(b);
    const a = await startNode();
    nodes.push(a);
    const dialled = `127.0.0.1:${b.address.split(':')[1]}`;
    const err = await rejectionOf(
      a.system.root.request(new PID(dialled, 'x'), 'hi', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect(err.message).to.contain(`states address ${b.address}`);
  });
});

describe('Remote bad frames', function () {
  this.timeout(20000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  it('closes a stream that sends a corrupt frame, logs it, and keeps serving other peers', async () => {
    const a = await startNode();
    const b = await startNode();
    nodes.push(a, b);
    b.system.root.spawnNamed(echo, 'echo');
    const raw = rawConnect(b.address);
    const ack = await rawHandshake(raw, { memberId: 'raw' });
    raw.send(Buffer.from([0x1a, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    const status = await raw.ended;
    raw.close();
    expect(ack.handshakeAck!.accepted).to.equal(true);
    expect(status.details).to.contain('corrupt frame');
    expect(b.remote.stats.corruptFrames).to.equal(1);
    expect(
      b.logs.some(
        (l) => l.level === 'error' && l.msg === 'corrupt remote frame; closing that stream',
      ),
    ).to.equal(true);
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'still here', { timeoutMs: 5000 }),
    ).to.equal('still here');
  });

  it('survives garbage bytes on its port and keeps serving other peers', async () => {
    const a = await startNode();
    const b = await startNode();
    nodes.push(a, b);
    b.system.root.spawnNamed(echo, 'echo');
    const [host, port] = b.address.split(':');
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), host, () =>
        socket.end(Buffer.from('GET / HTTP/1.1\r\n\r\n\x00\x01garbage')),
      );
      socket.on('error', () => resolve());
      socket.on('close', () => resolve());
      socket.resume();
    });
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'ok', { timeoutMs: 5000 }),
    ).to.equal('ok');
  });
});
