import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { freePort, isAlive, startEtcd, startRedis } from '@granary/testkit';
import type { EtcdHandle, RedisHandle } from '@granary/testkit';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commandOf,
  envFilesOf,
  environmentOf,
  argOf,
  loadCompose,
  nodeServices,
  parseEnvFile,
} from './helpers/compose';
import { COMPOSE_ENV_FILE, COMPOSE_ENV_SCRIPT, REPO_ROOT } from './helpers/paths';

/** Pongs the pinger must print from the compose nodes. */
const PONGS_EXPECTED = 3;
const PONGS_WITHIN_MS = 20_000;
const EXIT_WITHIN_MS = 15_000;

/**
 * The only variables changed from docker-compose.yml: container addresses become loopback
 * (service names do not resolve here, and tests bind loopback only), every node gets its own
 * ports (containers all use 4000, and 9464 for the ops server), the cluster name is unique per
 * run.
 */
function localEnvironment(
  env: Record<string, string>,
  local: { etcd: string; redis: string; port: number; opsPort: number; cluster: string },
): Record<string, string> {
  const out: Record<string, string> = {
    ...env,
    GRANARY_CLUSTER: local.cluster,
    GRANARY_PORT: String(local.port),
  };
  if (out.GRANARY_ETCD !== undefined) out.GRANARY_ETCD = local.etcd;
  if (out.GRANARY_REDIS !== undefined) out.GRANARY_REDIS = local.redis;
  if (out.GRANARY_HOST !== undefined) out.GRANARY_HOST = '127.0.0.1';
  if (out.GRANARY_ADVERTISED_HOST !== undefined) out.GRANARY_ADVERTISED_HOST = '127.0.0.1';
  if (out.GRANARY_OPS_PORT !== undefined) out.GRANARY_OPS_PORT = String(local.opsPort);
  if (out.GRANARY_OPS_HOST !== undefined) out.GRANARY_OPS_HOST = '127.0.0.1';
  return out;
}

interface Service {
  name: string;
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

describe('docker-compose.yml node services, run as local processes', function () {
  this.timeout(60_000);
  let etcd: EtcdHandle;
  let redis: RedisHandle;
  const services: Service[] = [];
  let onLine: () => void = () => {};

  let envDir: string;
  /** The env file compose would load, written by the same script a user runs. */
  let envFile: Record<string, string>;

  before(async () => {
    // Redis persists as the compose file runs it: the ponger nodes' stores check it at start.
    const redisCommand = commandOf(loadCompose().services.redis);
    const appendfsync = argOf(redisCommand, 'appendfsync');
    [etcd, redis] = await Promise.all([
      startEtcd(),
      startRedis({
        appendonly: argOf(redisCommand, 'appendonly') === 'yes',
        ...(appendfsync ? { appendfsync: appendfsync as 'always' | 'everysec' | 'no' } : {}),
      }),
    ]);
    envDir = mkdtempSync(join(tmpdir(), 'granary-compose-run-'));
    execFileSync(COMPOSE_ENV_SCRIPT, [join(envDir, COMPOSE_ENV_FILE)], { stdio: 'ignore' });
    envFile = parseEnvFile(readFileSync(join(envDir, COMPOSE_ENV_FILE), 'utf8'));
  });

  after(async () => {
    for (const s of services)
      if (s.child.pid !== undefined && isAlive(s.child.pid)) s.child.kill('SIGKILL');
    await etcd?.stop();
    await redis?.stop();
    if (envDir) rmSync(envDir, { recursive: true, force: true });
  });

  it("runs each service's exact command against etcd and Redis, and pongs flow", async () => {
    const cluster = `compose-${randomBytes(4).toString('hex')}`;
    for (const [name, service] of nodeServices(loadCompose().services)) {
      const [command, ...args] = commandOf(service);
      expect(command).to.equal('node');
      expect(envFilesOf(service), name).to.deep.equal([COMPOSE_ENV_FILE]);
      const env = localEnvironment(
        { ...envFile, ...environmentOf(service) },
        {
          etcd: etcd.endpoints.join(','),
          redis: redis.url,
          port: await freePort(),
          opsPort: await freePort(),
          cluster,
        },
      );
      const child = spawn(process.execPath, args, {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines: string[] = [];
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', (l) => {
          lines.push(l);
          onLine();
        });
      }
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => resolve(code)),
      );
      services.push({ name, child, lines, exited });
    }
    const pinger = services.find((s) => s.name === 'pinger');
    expect(pinger, 'a pinger service').to.not.equal(undefined);
    const log = (): string =>
      services.map((s) => s.lines.map((l) => `[${s.name}] ${l}`).join('\n')).join('\n');
    const pongs = (): string[] =>
      pinger?.lines.filter((l) => / pong cnt=\d+ via=rpc from=ponger-[ab]\b/.test(l)) ?? [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`fewer than ${PONGS_EXPECTED} pongs in ${PONGS_WITHIN_MS} ms:\n${log()}`),
          ),
        PONGS_WITHIN_MS,
      );
      onLine = () => {
        if (pongs().length >= PONGS_EXPECTED) {
          clearTimeout(timer);
          resolve();
        }
      };
      onLine();
    });
    const host = services.find((s) =>
      s.lines.some((l) => / activated grain=messages\.Ponger\/ponger-1 /.test(l)),
    );
    expect(host?.name, log()).to.match(/^ponger-[ab]$/);
    // Each grain writes its count to Redis: the activation loaded it from there.
    expect(host?.lines.some((l) => / answered=\d+/.test(l))).to.equal(true);

    for (const s of services) s.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const codes = await Promise.race([
      Promise.all(services.map((s) => s.exited)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`nodes did not stop:\n${log()}`)),
          EXIT_WITHIN_MS,
        );
      }),
    ]);
    clearTimeout(timer);
    expect(codes, log()).to.deep.equal(services.map(() => 0));
  });
});
