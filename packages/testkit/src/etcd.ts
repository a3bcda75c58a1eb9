import { freePort } from './free-port';
import { ManagedServer } from './managed-server';

/** Options of startEtcd(). */
export interface EtcdOptions {
  /**
   * Path of the etcd binary.
   * @default '/usr/bin/etcd' (Debian package etcd-server)
   */
  binary?: string;
}

/** A running etcd, started by the test on free loopback ports. */
export interface EtcdHandle {
  /** Client endpoints, for `new Etcd3({ hosts: endpoints })`. */
  readonly endpoints: string[];
  /** Pid while running. */
  readonly pid: number | undefined;
  /** Temp data dir while it exists. */
  readonly dataDir: string | undefined;
  /** Graceful stop; removes the data dir unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL; removes the data dir unless `keepData`. */
  kill(options?: { keepData?: boolean }): Promise<void>;
  /** SIGSTOP: etcd hangs, for fault tests. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Start again on the same ports with the data kept by the last stop/kill. */
  restart(): Promise<void>;
}

/**
 * Starts a single-member etcd on free loopback ports with a temp data dir and resolves once it
 * reports healthy.
 *
 * @example
 * const etcd = await startEtcd();
 * const client = new Etcd3({ hosts: etcd.endpoints });
 * // ...
 * await etcd.stop();
 */
export async function startEtcd(options: EtcdOptions = {}): Promise<EtcdHandle> {
  const clientPort = await freePort();
  const peerPort = await freePort();
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const server = new ManagedServer({
    binary: options.binary ?? '/usr/bin/etcd',
    debianPackage: 'etcd-server',
    label: 'etcd',
    args: (dataDir) => [
      '--name=granary-test',
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=granary-test=${peerUrl}`,
      '--initial-cluster-state=new',
      '--log-level=error',
      '--logger=zap',
    ],
    probe: async () => {
      const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(500) });
      const body = (await res.json()) as { health?: string };
      return body.health === 'true';
    },
  });
  await server.start();
  return {
    endpoints: [clientUrl],
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
