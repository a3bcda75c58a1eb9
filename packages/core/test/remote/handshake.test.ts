import * as net from 'node:net';
import { expect } from 'chai';
import { EndpointUnavailableError, HandshakeError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { PROTOCOL_VERSION } from '../../src/remote/internal/wire';
import type { TestNode } from './helpers';
import { rawConnect, rejectionOf, startNode, stopNodes } from './helpers';

const echo = Props.fromFunc((ctx) => ctx.respond(ctx.message));

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
    let delivered = 0;
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => void (typeof ctx.message === 'string' && delivered++)),
      'sink',
    );
    a.system.root.send(new PID(b.address, 'sink'), 'first');
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'sink'), 'x', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect((err as Error).cause).to.be.instanceOf(HandshakeError);
    expect(err.message).to.contain("cluster name 'blue' does not match 'green' (clusterName)");
    expect(b.remote.stats.refusedHandshakes).to.equal(1);
    expect(
      b.logs.some((l) => l.level === 'error' && l.msg === 'remote handshake refused'),
    ).to.equal(true);
    expect(
      a.logs.some((l) => l.level === 'error' && l.msg === 'remote handshake refused by peer'),
    ).to.equal(true);
    expect(delivered).to.equal(0);
  });

  it('refuses a peer with the wrong shared secret', async () => {
    const [a, b] = await pair(
      { secret: 'nope-nope-nope-nope' },
      { secret: 's3cret-s3cret-s3cret' },
    );
    b.system.root.spawnNamed(echo, 'echo');
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'echo'), 'x', { timeoutMs: 5000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect(err.message).to.contain('shared secret does not match (secret)');
  });

  it('accepts a peer with the same cluster name and secret', async () => {
    const [a, b] = await pair(
      { clusterName: 'c', secret: 'a-shared-secret-16' },
      { clusterName: 'c', secret: 'a-shared-secret-16' },
    );
    b.system.root.spawnNamed(echo, 'echo');
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'hi', { timeoutMs: 5000 }),
    ).to.equal('hi');
  });

  it('refuses another protocol version with the reason in the ack', async () => {
    const b = await startNode();
    nodes.push(b);
    const raw = rawConnect(b.address);
    raw.send({
      handshake: {
        clusterName: 'granary',
        memberId: 'old',
        address: '127.0.0.1:1',
        protocolVersion: PROTOCOL_VERSION + 1,
        secret: '',
      },
    });
    const status = await raw.ended;
    raw.close();
    expect(status.details).to.contain('protocol version');
    expect(raw.frames).to.have.length(1);
    expect(raw.frames[0]!.handshakeAck!.accepted).to.equal(false);
    expect(raw.frames[0]!.handshakeAck!.reason).to.contain(`this node speaks ${PROTOCOL_VERSION}`);
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
    raw.send({
      handshake: {
        clusterName: 'granary',
        memberId: 'raw',
        address: '127.0.0.1:9',
        protocolVersion: PROTOCOL_VERSION,
        secret: '',
      },
    });
    raw.send(Buffer.from([0x1a, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    const status = await raw.ended;
    raw.close();
    expect(raw.frames[0]!.handshakeAck!.accepted).to.equal(true);
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
