import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './free-port';
import { ManagedServer } from './managed-server';
import { startRedis, type RedisHandle, type RedisOptions } from './redis';
import { respCommand, type RespValue } from './resp';
import { TestkitError } from './errors';

/** Options of startRedisSentinel(). */
export interface RedisSentinelOptions {
  /**
   * Replicas of the primary.
   * @default 1
   */
  replicas?: number;
  /**
   * Sentinel processes (quorum: a majority of them).
   * @default 1
   */
  sentinels?: number;
  /**
   * Persistence of every data server (primary and replicas).
   * @default startRedis' defaults (appendonly yes, appendfsync no)
   */
  server?: Pick<RedisOptions, 'appendonly' | 'appendfsync' | 'binary'>;
  /**
   * Path of the redis-sentinel binary.
   * @default '/usr/bin/redis-sentinel' (Debian package redis-sentinel)
   */
  sentinelBinary?: string;
  /**
   * How long the primary must be silent before Sentinel declares it down and fails over
   * (`down-after-milliseconds`). Short, so a test's failover takes about a second.
   * @default 1000
   */
  downAfterMs?: number;
  /**
   * Sentinel's `failover-timeout`.
   * @default 3000
   */
  failoverTimeoutMs?: number;
  /**
   * The name the primary is monitored under (ioredis' `name` option).
   * @default 'granary'
   */
  name?: string;
}

/** A Redis primary with replicas and Sentinel watching it, on free loopback ports. */
export interface RedisSentinelHandle {
  /** The monitored name. */
  readonly name: string;
  /** Where the Sentinels listen (ioredis' `sentinels` option). */
  readonly sentinels: ReadonlyArray<{ host: string; port: number }>;
  /** Every data server; the first was the primary at start. */
  readonly servers: readonly RedisHandle[];
  /** The server the Sentinels name as primary now. */
  primary(): Promise<RedisHandle>;
  /**
   * Waits until the Sentinels name a primary other than `previous` and it answers as a
   * primary; resolves with it.
   */
  waitForFailover(previous: RedisHandle, timeoutMs?: number): Promise<RedisHandle>;
  /** Waits until the current primary has `count` replicas online. */
  waitForReplicas(count: number, timeoutMs?: number): Promise<void>;
  /** Stops every Sentinel and server and removes their data. */
  stop(): Promise<void>;
}

/** How often the waits poll (Sentinel and INFO answer in microseconds). */
const POLL_MS = 50;
const DEFAULT_WAIT_MS = 20_000;

/** Where Debian's redis-sentinel installs the binary startRedisSentinel runs by default. */
export const REDIS_SENTINEL_BINARY = '/usr/bin/redis-sentinel';

/**
 * Why startRedisSentinel cannot run here (the binary is missing), or undefined when it can.
 * Tests call it in `before` and skip with the reason printed, as for testNetworkUnavailable.
 */
export function redisSentinelUnavailable(binary = REDIS_SENTINEL_BINARY): string | undefined {
  if (!existsSync(binary)) return `${binary} is missing (Debian package redis-sentinel)`;
  return undefined;
}

/**
 * Starts a primary, `replicas` replicas and `sentinels` Sentinels (Debian's redis-sentinel) on
 * free loopback ports and resolves once the replicas are in sync and every Sentinel knows them,
 * so a failover can start at once. For tests of Sentinel failover: kill the primary, wait for
 * the failover, restart the old primary as a replica of the new one.
 *
 * @example
 * const rs = await startRedisSentinel({ replicas: 1 });
 * const client = new Redis({ sentinels: rs.sentinels, name: rs.name });
 * const old = await rs.primary();
 * await old.kill({ keepData: true });
 * const next = await rs.waitForFailover(old);
 * await old.restart({ replicaOf: next });
 */
export async function startRedisSentinel(
  options: RedisSentinelOptions = {},
): Promise<RedisSentinelHandle> {
  const name = options.name ?? 'granary';
  const servers: RedisHandle[] = [];
  const sentinels: ManagedServer[] = [];
  const sentinelPorts: number[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(sentinels.map((s) => s.stop()));
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    const primary = await startRedis({ ...options.server });
    servers.push(primary);
    for (let i = 0; i < (options.replicas ?? 1); i++) {
      servers.push(await startRedis({ ...options.server, replicaOf: primary }));
    }
    await waitUntil(
      async () => (await onlineReplicas(primary.port)) >= servers.length - 1,
      'the replicas to sync with the primary',
    );
    const count = options.sentinels ?? 1;
    const quorum = Math.floor(count / 2) + 1;
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const sentinel = new ManagedServer({
        binary: options.sentinelBinary ?? REDIS_SENTINEL_BINARY,
        debianPackage: 'redis-sentinel',
        label: 'redis-sentinel',
        // Sentinel rewrites its config file as it learns: written once, kept across restarts.
        prepare: (dir) => {
          const file = join(dir, 'sentinel.conf');
          if (existsSync(file)) return;
          const lines = [
            `port ${port}`,
            'bind 127.0.0.1',
            'daemonize no',
            `dir ${dir}`,
            'loglevel warning',
            `sentinel monitor ${name} 127.0.0.1 ${primary.port} ${quorum}`,
            `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
            `sentinel failover-timeout ${name} ${options.failoverTimeoutMs ?? 3000}`,
            `sentinel parallel-syncs ${name} 1`,
          ];
          writeFileSync(file, `${lines.join('\n')}\n`);
        },
        args: (dir) => [join(dir, 'sentinel.conf')],
        probe: async () => (await respCommand(port, ['PING'])) === 'PONG',
      });
      await sentinel.start();
      sentinels.push(sentinel);
      sentinelPorts.push(port);
    }
    for (const port of sentinelPorts) {
      await waitUntil(async () => {
        const known = await respCommand(port, ['SENTINEL', 'REPLICAS', name]);
        return Array.isArray(known) && known.length >= servers.length - 1;
      }, 'every Sentinel to know the replicas');
    }
  } catch (err) {
    await stop();
    throw err;
  }

  const primaryNow = async (): Promise<RedisHandle> => {
    const reply = await respCommand(sentinelPorts[0]!, [
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      name,
    ]);
    const port = Array.isArray(reply) ? Number(reply[1]) : NaN;
    const server = servers.find((s) => s.port === port);
    if (server === undefined)
      throw new TestkitError(`Sentinel names no known primary: ${String(reply)}`);
    return server;
  };
  return {
    name,
    sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
    servers,
    primary: primaryNow,
    waitForFailover: async (previous, timeoutMs = DEFAULT_WAIT_MS) => {
      let next: RedisHandle | undefined;
      await waitUntil(
        async () => {
          const candidate = await primaryNow();
          if (candidate === previous) return false;
          if (!(await isPrimary(candidate.port))) return false;
          next = candidate;
          return true;
        },
        'Sentinel to promote a replica',
        timeoutMs,
      );
      return next!;
    },
    waitForReplicas: async (n, timeoutMs = DEFAULT_WAIT_MS) => {
      await waitUntil(
        async () => (await onlineReplicas((await primaryNow()).port)) >= n,
        `${n} replica(s) online at the primary`,
        timeoutMs,
      );
    },
    stop,
  };
}

async function info(port: number): Promise<string> {
  const reply: RespValue = await respCommand(port, ['INFO', 'replication']);
  return typeof reply === 'string' ? reply : '';
}

async function isPrimary(port: number): Promise<boolean> {
  return /^role:master\r?$/m.test(await info(port));
}

async function onlineReplicas(port: number): Promise<number> {
  return (await info(port)).split('\n').filter((l) => /^slave\d+:.*state=online/.test(l)).length;
}

async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = DEFAULT_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new TestkitError(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
