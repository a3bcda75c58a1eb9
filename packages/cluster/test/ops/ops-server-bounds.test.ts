import * as net from 'node:net';
import { expect } from 'chai';
import { InvalidOptionError, type Logger } from '@granary/core';
import { OpsServer } from '../../src/ops/ops-server';
import type { OpsOptions } from '../../src/ops/ops-options';

/** The warn lines a logger got. */
function warnings(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_o: object | string, msg?: string) => void lines.push(msg ?? ''),
    error: () => undefined,
    child: () => logger,
  };
  return { logger, lines };
}

/** Resolves with what the server sent before it closed `socket`, or 'open' after `ms`. */
function closedWithin(socket: net.Socket, ms: number): Promise<string> {
  let got = '';
  socket.on('data', (d: Buffer) => (got += d.toString()));
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve('open'), ms);
    socket.once('close', () => {
      clearTimeout(t);
      resolve(got);
    });
  });
}

describe('OpsServer connection bounds', function () {
  this.timeout(20_000);
  const servers: OpsServer[] = [];
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function start(options: Partial<OpsOptions>, logger: Logger): Promise<OpsServer> {
    const s = await OpsServer.start({ port: 0, ...options }, logger);
    servers.push(s);
    return s;
  }
  function connect(ops: OpsServer): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const s = net.connect(ops.port, '127.0.0.1', () => resolve(s));
      s.on('error', reject);
      sockets.push(s);
    });
  }

  it('makes room past maxConnections: closes the connection silent longest, with one log line naming the option', async () => {
    const { logger, lines } = warnings();
    const ops = await start({ maxConnections: 2 }, logger);
    const first = await connect(ops);
    const second = await connect(ops);
    const third = await connect(ops);
    expect(await closedWithin(first, 3000)).to.equal('');
    const fourth = await connect(ops);
    expect(await closedWithin(second, 3000)).to.equal('');
    expect(await closedWithin(third, 300)).to.equal('open');
    expect(await closedWithin(fourth, 300)).to.equal('open');
    expect(lines).to.deep.equal([
      'ops connection closed to make room: 2 are open and it had no request in progress (ops.maxConnections)',
    ]);
  });

  it('answers /livez while a flood of silent connections from another address holds every slot', async () => {
    const ops = await start({ maxConnections: 8 }, warnings().logger);
    // The attacker: reconnects at once whenever a connection of its is closed, never says a word.
    let flooding = true;
    const flood = (): void => {
      if (!flooding) return;
      const s = net.connect({ port: ops.port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      sockets.push(s);
      s.on('error', () => undefined);
      s.on('close', () => setImmediate(flood));
    };
    try {
      for (let i = 0; i < 16; i++) flood();
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${ops.url}/livez`);
        expect(res.status, `probe ${i}`).to.equal(200);
      }
    } finally {
      flooding = false;
    }
  });

  it('refuses a newcomer only when every open connection has a request in progress', async () => {
    const { logger, lines } = warnings();
    const ops = await start({ maxConnections: 2 }, logger);
    ops.route('GET', '/hang', () => undefined);
    const busy = [await connect(ops), await connect(ops)];
    for (const s of busy) s.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const late = await connect(ops);
    expect(await closedWithin(late, 3000)).to.equal('');
    for (const s of busy) expect(await closedWithin(s, 200)).to.equal('open');
    expect(lines).to.deep.equal([
      'ops connection refused: 2 are open, each with a request in progress (ops.maxConnections)',
    ]);
  });

  it('answers 408 and closes a connection that trickles its request head past headersTimeoutMs', async () => {
    const ops = await start({ headersTimeoutMs: 300, requestTimeoutMs: 1000 }, warnings().logger);
    const slow = await connect(ops);
    slow.write('GET /livez HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => slow.write('X-Slow: 1\r\n'), 50);
    try {
      expect(await closedWithin(slow, 5000)).to.match(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(trickle);
    }
  });

  it('answers CONNECT with 405 and closes, as other methods it has no route for', async () => {
    const ops = await start({}, warnings().logger);
    const s = await connect(ops);
    s.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const answer = await closedWithin(s, 3000);
    expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 405 Method Not Allowed');
    expect(answer.endsWith('\r\n\r\n{"error":"method not allowed"}')).to.equal(true);
  });

  it('answers HEAD like GET without a body, and names the methods a path takes in a 405 (Allow)', async () => {
    const ops = await start({}, warnings().logger);
    const head = await fetch(`${ops.url}/livez`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(await head.text()).to.equal('');
    const post = await fetch(`${ops.url}/livez`, { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    expect((await fetch(`${ops.url}/nothing`, { method: 'HEAD' })).status).to.equal(404);
  });

  it('refuses a headersTimeoutMs over requestTimeoutMs, and a maxConnections below 1', async () => {
    const { logger } = warnings();
    for (const bad of [{ headersTimeoutMs: 2000, requestTimeoutMs: 1000 }, { maxConnections: 0 }]) {
      const err = await OpsServer.start({ port: 0, ...bad }, logger).then(
        (s) => (servers.push(s), undefined),
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(bad)).to.be.instanceOf(InvalidOptionError);
    }
  });
});
