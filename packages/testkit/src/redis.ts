import { connect } from 'node:net';
import { freePort } from './free-port';
import { ManagedServer } from './managed-server';

/** Options of startRedis(). */
export interface RedisOptions {
  /**
   * Path of the redis-server binary.
   * @default '/usr/bin/redis-server' (Debian package redis-server)
   */
  binary?: string;
}

/** A running Redis, started by the test on a free loopback port, without persistence. */
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
  /** Start again on the same port (empty: Redis runs without persistence). */
  restart(): Promise<void>;
}

/** Sends PING over a raw socket; true on +PONG. Avoids a client dependency in the testkit. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

/**
 * Starts redis-server on a free loopback port (no RDB, no AOF) and resolves once it answers PING.
 *
 * @example
 * const redis = await startRedis();
 * const client = new Redis(redis.url);
 * // ...
 * await redis.stop();
 */
export async function startRedis(options: RedisOptions = {}): Promise<RedisHandle> {
  const port = await freePort();
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
      'no',
      '--dir',
      dataDir,
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
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
    restart: () => server.restart(),
  };
}
