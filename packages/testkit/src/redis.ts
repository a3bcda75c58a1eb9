import { freePort } from './free-port';
import { ManagedServer } from './managed-server';
import { respCommand } from './resp';

/** Options of startRedis(). */
export interface RedisOptions {
  /**
   * Path of the redis-server binary.
   * @default '/usr/bin/redis-server' (Debian package redis-server)
   */
  binary?: string;
  /**
   * Redis' append-only file (`appendonly yes`): with `appendfsync` `no` (the default here) or
   * `always` every write is in the file before Redis replies, so `kill({ keepData: true })`
   * then `restart()` loses nothing acknowledged. This is
   * what RedisStateStore's default durability (`'restart'`) requires. `false` keeps nothing
   * across a restart (no AOF, no RDB snapshots).
   * @default true
   */
  appendonly?: boolean;
  /**
   * When the append-only file is fsynced (`always`: before every reply). `no` and `always` make
   * Redis write every command to the file before it replies, which RedisStateStore's default
   * durability (`'restart'`) requires; `everysec` may hold writes in memory while a background
   * fsync runs (a killed Redis loses them), so the default level refuses it.
   * @default 'no' (the cheapest setting the default durability accepts)
   */
  appendfsync?: 'always' | 'everysec' | 'no';
  /**
   * Start as a replica of this server (`replicaof`); it then copies everything the primary has.
   * @default undefined (a primary)
   */
  replicaOf?: { host: string; port: number };
  /**
   * The port to listen on.
   * @default a free port
   */
  port?: number;
  /**
   * More redis-server arguments, e.g. `['--rename-command', 'CONFIG', '']` for a Redis that
   * refuses CONFIG as managed services do.
   * @default []
   */
  args?: readonly string[];
}

/** A running Redis, started by the test on a free loopback port. */
export interface RedisHandle {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number | undefined;
  readonly dataDir: string | undefined;
  stop(options?: { keepData?: boolean }): Promise<void>;
  kill(options?: { keepData?: boolean }): Promise<void>;
  pause(): void;
  resume(): void;
  /**
   * Start again on the same port, with the data if the last stop or kill kept it (and the
   * server has `appendonly`); else empty. `replicaOf` changes the role from this start on
   * (`null`: a primary), as an orchestrator restarts a failed primary as a replica of the new one.
   */
  restart(options?: { replicaOf?: { host: string; port: number } | null }): Promise<void>;
}

/** PING; true on PONG (a server still loading its files answers LOADING: not ready yet). */
async function ping(port: number): Promise<boolean> {
  const reply = await respCommand(port, ['PING']);
  return reply === 'PONG';
}

/**
 * Starts redis-server on a free loopback port (append-only file on, no RDB snapshots) and
 * resolves once it answers PING.
 *
 * @example
 * const redis = await startRedis(); // { appendonly: false } for a Redis that keeps nothing
 * const client = new Redis(redis.url);
 * // ...
 * await redis.stop();
 */
export async function startRedis(options: RedisOptions = {}): Promise<RedisHandle> {
  const port = options.port ?? (await freePort());
  const appendonly = options.appendonly ?? true;
  let replica = options.replicaOf;
  const server = new ManagedServer({
    binary: options.binary ?? '/usr/bin/redis-server',
    debianPackage: 'redis-server',
    label: 'redis',
    args: (dataDir) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      appendonly ? 'yes' : 'no',
      '--appendfsync',
      options.appendfsync ?? 'no',
      ...(replica ? ['--replicaof', replica.host, String(replica.port)] : []),
      // A replica's full sync starts at once instead of after the default 5 s gathering delay.
      '--repl-diskless-sync-delay',
      '0',
      '--dir',
      dataDir,
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
      ...(options.args ?? []),
    ],
    probe: () => ping(port),
  });
  await server.start();
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return server.pid;
    },
    get dataDir() {
      return server.dir;
    },
    stop: (o) => server.stop(o),
    kill: (o) => server.kill(o),
    pause: () => server.pause(),
    resume: () => server.resume(),
    restart: (o) => {
      if (o?.replicaOf !== undefined) replica = o.replicaOf ?? undefined;
      return server.restart();
    },
  };
}
