import { fork, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { freePort } from '@granary/testkit';
import { expect } from 'chai';
import { DeadLetterEvent } from '../../src/dead-letters';
import { EndpointUnavailableError } from '../../src/errors';
import { Terminated } from '../../src/messages';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { EndpointConnectedEvent, EndpointTerminatedEvent } from '../../src/remote/remote-events';
import type { TestNode } from './helpers';
import { nextEvent, rejectionOf, startNode, stopNodes, until } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'remote-node.js');

/** A child node on `port`; resolves once it printed its address. */
function startChild(port: number): Promise<{ child: ChildProcess; address: string }> {
  const child = fork(FIXTURE, [String(port)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n'))
        resolve({ child, address: (JSON.parse(line!) as { address: string }).address });
    });
    child.on('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null
      ? resolve()
      : child.once('exit', () => resolve()),
  );
}

describe('Remote failures (child processes)', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  const children: ChildProcess[] = [];
  let a: TestNode;

  beforeEach(async () => {
    a = await startNode({ reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    nodes.push(a);
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill('SIGKILL');
      await exited(c);
    }
    await stopNodes(nodes);
  });

  it('after SIGKILL: watchers get Terminated, pending requests reject fast, a new node on the port is reachable', async () => {
    const port = await freePort();
    const first = await startChild(port);
    children.push(first.child);
    const echo = new PID(first.address, 'echo');
    expect(await a.system.root.request(echo, 'ping', { timeoutMs: 5000 })).to.equal('ping');

    let resolveTerminated!: (t: Terminated) => void;
    const terminated = new Promise<Terminated>((r) => (resolveTerminated = r));
    const watcher = a.system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message instanceof Terminated) resolveTerminated(ctx.message);
        else if (ctx.message === 'watch') {
          ctx.watch(echo);
          ctx.respond('ok');
        }
      }),
    );
    await a.system.root.request(watcher, 'watch', { timeoutMs: 5000 });
    await a.system.root.request(echo, 'sync', { timeoutMs: 5000 });
    const pending = a.system.root.request(new PID(first.address, 'silent'), 'never answered', {
      timeoutMs: 20000,
    });
    pending.catch(() => undefined);
    await a.system.root.request(echo, 'sync', { timeoutMs: 5000 });

    const down = nextEvent(a.system, EndpointTerminatedEvent);
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    const err = await rejectionOf(pending);
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect(Date.now() - killedAt).to.be.below(5000);
    // It had been sent: it may have been delivered (callers must not assume it was not).
    expect((err as EndpointUnavailableError).inFlight).to.equal(true);
    expect((err as EndpointUnavailableError).peerLeft).to.equal(false);
    const t = await terminated;
    expect(t.who.equals(echo)).to.equal(true);
    expect(t.why).to.equal('address-terminated');
    expect((await down).address).to.equal(first.address);

    // While it is down: a request fails with EndpointUnavailableError, not its timeout; a send is a dead letter.
    const start = Date.now();
    const whileDown = await rejectionOf(a.system.root.request(echo, 'x', { timeoutMs: 20000 }));
    expect(whileDown).to.be.instanceOf(EndpointUnavailableError);
    expect((whileDown as EndpointUnavailableError).inFlight, 'never sent').to.equal(false);
    expect(Date.now() - start).to.be.below(5000);
    const dead = nextEvent(a.system, DeadLetterEvent, (e) => e.message === 'lost');
    a.system.root.send(echo, 'lost');
    expect((await dead).reason).to.equal('endpoint-unavailable');

    await exited(first.child);
    const up = nextEvent(a.system, EndpointConnectedEvent, (e) => e.address === first.address);
    const second = await startChild(port);
    children.push(second.child);
    await up;
    expect(await a.system.root.request(echo, 'back', { timeoutMs: 5000 })).to.equal('back');
  });

  it('a request pending when the peer shuts down gracefully rejects with peerLeft and inFlight', async () => {
    const port = await freePort();
    const node = await startChild(port);
    children.push(node.child);
    const pending = a.system.root.request(new PID(node.address, 'silent'), 'never answered', {
      timeoutMs: 20000,
    });
    pending.catch(() => undefined);
    await a.system.root.request(new PID(node.address, 'echo'), 'sync', { timeoutMs: 5000 });
    node.child.send({ cmd: 'shutdown' });
    const err = await rejectionOf(pending);
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect((err as EndpointUnavailableError).peerLeft).to.equal(true);
    expect((err as EndpointUnavailableError).inFlight).to.equal(true);
    await exited(node.child);
  });

  it('rejects a request to a node that was never there with EndpointUnavailableError before its timeout', async () => {
    const port = await freePort();
    const start = Date.now();
    const err = await rejectionOf(
      a.system.root.request(new PID(`127.0.0.1:${port}`, 'x'), 'hello', { timeoutMs: 20000 }),
    );
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    expect((err as EndpointUnavailableError).code).to.equal('ERR_ENDPOINT_UNAVAILABLE');
    expect(Date.now() - start).to.be.below(5000);
  });

  it('rejects requests to an address grpc cannot parse or resolve, without throwing', async () => {
    for (const address of ['', 'no such host:::1']) {
      const err = await rejectionOf(
        a.system.root.request(new PID(address, 'x'), 'hello', { timeoutMs: 20000 }),
      );
      expect(err).to.be.instanceOf(EndpointUnavailableError);
    }
  });

  it('gives up a connect attempt after connectTimeoutMs when the peer never answers', async () => {
    const silent = net.createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const impatient = await startNode({ connectTimeoutMs: 200 });
    nodes.push(impatient);
    try {
      const err = await rejectionOf(
        impatient.system.root.request(new PID(`127.0.0.1:${port}`, 'x'), 'hello', {
          timeoutMs: 20000,
        }),
      );
      expect(err).to.be.instanceOf(EndpointUnavailableError);
      expect(err.message).to.contain('connectTimeoutMs');
    } finally {
      silent.close();
    }
  });

  it('watching an actor on an unreachable node delivers Terminated with address-terminated', async () => {
    const ghost = new PID(`127.0.0.1:${await freePort()}`, 'ghost');
    let resolveTerminated!: (t: Terminated) => void;
    const terminated = new Promise<Terminated>((r) => (resolveTerminated = r));
    const watcher = a.system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message instanceof Terminated) resolveTerminated(ctx.message);
        else if (ctx.message === 'watch') ctx.watch(ghost);
      }),
    );
    a.system.root.send(watcher, 'watch');
    const t = await terminated;
    expect(t.who.equals(ghost)).to.equal(true);
    expect(t.why).to.equal('address-terminated');
  });

  it('graceful remote shutdown flushes queued batches and peers see address-terminated', async () => {
    const port = await freePort();
    const node = await startChild(port);
    children.push(node.child);
    const echo = new PID(node.address, 'echo');
    const count = 2000;
    const got: number[] = [];
    let allArrived!: () => void;
    const arrived = new Promise<void>((r) => (allArrived = r));
    const sink = a.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message !== 'number') return;
        got.push(ctx.message);
        if (got.length === count) allArrived();
      }),
      'sink',
    );
    let resolveTerminated!: (t: Terminated) => void;
    const terminated = new Promise<Terminated>((r) => (resolveTerminated = r));
    const watcher = a.system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message instanceof Terminated) resolveTerminated(ctx.message);
        else if (ctx.message === 'watch') {
          ctx.watch(new PID(node.address, 'silent'));
          ctx.respond('ok');
        }
      }),
    );
    await a.system.root.request(watcher, 'watch', { timeoutMs: 5000 });
    await a.system.root.request(echo, 'sync', { timeoutMs: 5000 });
    node.child.send({
      cmd: 'flood-and-close-remote',
      sink: { address: a.address, id: sink.id },
      count,
    });
    const t = await terminated;
    expect(t.who.id).to.equal('silent');
    expect(t.why).to.equal('address-terminated');
    await arrived;
    expect(got).to.deep.equal([...Array(count).keys()]);
    await exited(node.child);
  });

  it('a paused peer (SIGSTOP) is marked silent once a request to it waits linkProbeMs uncredited, and no longer once it reads again', async () => {
    const port = await freePort();
    const node = await startChild(port);
    children.push(node.child);
    const echo = new PID(node.address, 'echo');
    expect(await a.system.root.request(echo, 'hi', { timeoutMs: 5000 })).to.equal('hi');
    const silence = a.remote.silenceOf(node.address)!;
    expect(silence.since, 'a peer that answers').to.equal(0);
    expect(a.remote.silenceOf(a.address), 'this node itself').to.equal(undefined);
    node.child.kill('SIGSTOP');
    const pausedAt = Date.now();
    try {
      const pending = a.system.root.request(echo, 'while paused', { timeoutMs: 10_000 });
      await until(() => silence.since !== 0, 5000, 'the peer marked silent');
      const after = Date.now() - pausedAt;
      // linkProbeMs (1 s by default) after the request's bytes went out, plus the 100 ms that
      // confirm it (PeerSilence); since: the peer's last credit, before the pause.
      expect(after).to.be.within(900, 2500);
      expect(silence.since).to.be.at.most(pausedAt + 50);
      node.child.kill('SIGCONT');
      expect(await pending).to.equal('while paused');
      await until(() => silence.since === 0, 2000, 'the silence cleared');
    } finally {
      node.child.kill('SIGCONT');
    }
  });
});
