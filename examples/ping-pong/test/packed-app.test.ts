import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import {
  freePort,
  startEtcd,
  startRedis,
  type EtcdHandle,
  type RedisHandle,
} from '@granary/testkit';
import { EXAMPLE_DIR, REPO_ROOT } from './helpers/paths';

/** The app's sources: protos with imports and well-known types, a member, a client, a grpc-js call. */
const APP_FIXTURE = join(EXAMPLE_DIR, 'test', 'packed-app');
const SECRET = 'packed-app-secret-0123456789';
const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

interface Running {
  id: string;
  child: ChildProcess;
  gatewayPort: number;
}

/** Resolves with the line `predicate` accepts from `child`'s stdout (rejects when it exits). */
function lineOf(child: ChildProcess, predicate: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      if (predicate(line)) {
        rl.close();
        resolve(line);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before the line`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  // A child killed by a signal has no exit code, only a signal code.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('an app built from the npm pack tarballs, outside the workspace', function () {
  this.timeout(240_000);
  let dir: string;
  let etcd: EtcdHandle;
  let redis: RedisHandle;
  const nodes: Running[] = [];

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'granary-app-'));
    const packs = join(dir, 'packs');
    mkdirSync(packs);
    execFileSync(
      'npm',
      [
        'pack',
        '--silent',
        '--pack-destination',
        packs,
        '-w',
        '@granary/core',
        '-w',
        '@granary/cluster',
        '-w',
        '@granary/codegen',
      ],
      { cwd: REPO_ROOT, stdio: 'pipe', env: { ...process.env, npm_config_loglevel: 'error' } },
    );
    const tarball = (name: string): string =>
      join(
        packs,
        readdirSync(packs).find((f) => f.startsWith(`granary-${name}-`))!,
      );
    const app = join(dir, 'app');
    cpSync(APP_FIXTURE, app, { recursive: true });
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'granary-packed-app',
        private: true,
        dependencies: {
          '@granary/core': `file:${tarball('core')}`,
          '@granary/cluster': `file:${tarball('cluster')}`,
          '@granary/codegen': `file:${tarball('codegen')}`,
          '@grpc/grpc-js': '^1.14.7',
          '@grpc/proto-loader': '^0.8.0',
          '@types/node': '^20.0.0',
        },
      }),
    );
    // As a user installs them (from the npm cache the workspace's install filled).
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent'], {
      cwd: app,
      stdio: 'pipe',
    });
    execFileSync(
      join(app, 'node_modules', '.bin', 'granary-codegen'),
      ['protos/shop/cart.proto', 'protos/shop/common.proto', '-I', 'protos', '--out', 'src/gen'],
      { cwd: app, stdio: 'pipe' },
    );
    execFileSync(process.execPath, [TSC, '-p', app], { cwd: app, stdio: 'pipe' });
    etcd = await startEtcd();
    redis = await startRedis();
  });

  after(async () => {
    for (const n of nodes)
      if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGKILL');
    await Promise.all(nodes.map((n) => exited(n.child)));
    await redis?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function startNode(id: string): Promise<Running> {
    const gatewayPort = await freePort();
    const child = spawn(process.execPath, ['dist/node.js'], {
      cwd: join(dir, 'app'),
      stdio: ['pipe', 'pipe', 'inherit'],
      env: {
        ...process.env,
        APP_ID: id,
        APP_ETCD: etcd.endpoints[0]!,
        APP_REDIS: redis.url,
        APP_PORT: String(await freePort()),
        APP_GATEWAY_PORT: String(gatewayPort),
        APP_SECRET: SECRET,
      },
    });
    const running = { id, child, gatewayPort };
    nodes.push(running);
    await lineOf(child, (l) => l === `ready ${id}`);
    return running;
  }

  function grpcView(port: number): Promise<Record<string, unknown>> {
    const child = spawn(
      process.execPath,
      ['dist/grpc-call.js', join(dir, 'app', 'protos'), String(port), 'cart-1'],
      { cwd: join(dir, 'app'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    return lineOf(child, () => true).then((l) => JSON.parse(l) as Record<string, unknown>);
  }

  it('3 members on etcd, Redis state on a generated grain, a non-member client and grpc-js; SIGKILL the host and keep calling; everything exits by itself', async () => {
    for (const id of ['n1', 'n2', 'n3']) await startNode(id);
    const client = spawn(process.execPath, ['dist/client.js'], {
      cwd: join(dir, 'app'),
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, APP_ETCD: etcd.endpoints[0]!, APP_SECRET: SECRET },
    });
    const lines: Record<string, unknown>[] = [];
    const rl = createInterface({ input: client.stdout! });
    rl.on('line', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    const before = JSON.parse(
      await lineOf(client, (l) => l.includes('"before"') || l.includes('"error"')),
    ) as { view?: Record<string, string>; error?: string };
    expect(before.error).to.equal(undefined);
    expect(before.view!['totalUnits']).to.equal('15000000000');
    const host = before.view!['servedBy']!;

    // From plain grpc-js through a gateway, loading only the .proto.
    const viaGrpc = await grpcView(nodes.find((n) => n.id !== host)!.gatewayPort);
    expect(viaGrpc['totalUnits']).to.equal('15000000000');
    expect(viaGrpc['servedBy']).to.equal(host);

    const victim = nodes.find((n) => n.id === host)!;
    victim.child.kill('SIGKILL');
    await exited(victim.child);
    client.stdin!.end('killed\n');

    const started = Date.now();
    const code = await exited(client);
    const after = lines.find((l) => l['step'] === 'after') as {
      ok: number;
      view: Record<string, string>;
    };
    expect(code, JSON.stringify(lines)).to.equal(0); // exited by itself: no process.exit
    expect(after.ok).to.equal(20);
    expect(after.view['servedBy']).to.not.equal(host);
    expect(after.view['totalUnits']).to.equal('15000000001');
    // The state reloaded from Redis on the new owner, as the generated interface declares it.
    expect(after.view['totalUnitsType']).to.equal('string');
    expect(after.view['itemsType']).to.equal('string');
    expect(after.view['lastTokenClass']).to.equal('Uint8Array');
    expect(Date.now() - started).to.be.lessThan(60_000);

    const survivor = await grpcView(nodes.find((n) => n.child.exitCode === null)!.gatewayPort);
    expect(survivor['items']).to.equal('6');

    // Members stop when their stdin closes and exit by themselves (no open handle left).
    for (const n of nodes)
      if (n.child.exitCode === null && n.child.signalCode === null) n.child.stdin!.end();
    const codes = await Promise.all(nodes.filter((n) => n !== victim).map((n) => exited(n.child)));
    expect(codes).to.deep.equal([0, 0]);
  });
});
