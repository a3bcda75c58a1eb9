import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { expect } from 'chai';
import { startTestNetwork, testNetworkUnavailable, type TestNetwork } from '../src/test-network';

/** Connects to host:port; resolves true on connect, false after `ms` without one. */
function reachable(host: string, port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Runs `node -e <code>` inside a host; resolves with its stdout once it exits. */
function runIn(exec: readonly string[], code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = exec;
    const child = spawn(cmd!, [...args, process.execPath, '-e', code]);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', reject);
    child.once('close', () => resolve(out.trim()));
  });
}

describe('startTestNetwork (network namespaces on a private bridge)', function () {
  this.timeout(20_000);
  let net: TestNetwork | undefined;
  const reason = testNetworkUnavailable();

  before(function () {
    if (reason !== undefined) {
      console.log(`      skipped: ${reason}`);
      this.skip();
    }
  });
  afterEach(() => net?.close());

  it('gives each host its own address; a host reaches a server on the gateway and not when partitioned', async () => {
    net = startTestNetwork(2);
    expect(new Set(net.hosts.map((h) => h.ip)).size).to.equal(2);
    const server = createServer((s) => s.on('error', () => undefined).end('hi'));
    await new Promise<void>((r) => server.listen(0, net!.gateway, r));
    const port = (server.address() as { port: number }).port;
    const probe = `const s=require('net').connect(${port},'${net.gateway}');s.on('data',d=>{console.log(String(d));process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)});setTimeout(()=>{console.log('timeout');process.exit(0)},1500)`;
    try {
      expect(await runIn(net.hosts[0]!.exec, probe)).to.equal('hi');
      net.partition(0);
      expect(await runIn(net.hosts[0]!.exec, probe)).to.not.equal('hi');
      expect(await runIn(net.hosts[1]!.exec, probe), 'the other host').to.equal('hi');
      net.heal(0);
      expect(await runIn(net.hosts[0]!.exec, probe)).to.equal('hi');
    } finally {
      server.close();
    }
  });

  it('host loopback is the host’s own: the root namespace’s 127.0.0.1 is not reachable from it', async () => {
    net = startTestNetwork(1);
    const server = createServer((s) => s.on('error', () => undefined).end('root'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      expect(await reachable('127.0.0.1', port, 500)).to.equal(true);
      const probe = `const s=require('net').connect(${port},'127.0.0.1');s.on('data',d=>{console.log(String(d));process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)})`;
      expect(await runIn(net.hosts[0]!.exec, probe)).to.equal('ECONNREFUSED');
    } finally {
      server.close();
    }
  });

  it('close() removes the namespaces', () => {
    net = startTestNetwork(1);
    const ns = net.hosts[0]!.ns;
    net.close();
    net = undefined;
    expect(readdirSync('/run/netns')).to.not.include(ns);
  });
});
