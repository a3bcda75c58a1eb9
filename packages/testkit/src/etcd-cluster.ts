import { freePort } from './free-port';
import { ManagedServer, type StopOptions } from './managed-server';
import { TestkitError } from './errors';

/** Options of startEtcdCluster(). */
export interface EtcdClusterOptions {
  /**
   * Number of etcd members (3 tolerates the loss of one).
   * @default 3
   */
  size?: number;
  /**
   * Path of the etcd binary.
   * @default '/usr/bin/etcd' (Debian package etcd-server)
   */
  binary?: string;
  /**
   * Extra etcd flags for every member, e.g. `['--auto-compaction-retention=1m']`. etcd's own
   * defaults otherwise (heartbeat 100 ms, election timeout 1,000 ms), as in production.
   * @default []
   */
  extraArgs?: string[];
}

/** One member of a test etcd cluster. */
export interface EtcdMemberHandle {
  /** etcd member name (`m0`, `m1`, ...). */
  readonly name: string;
  /** This member's client URL. */
  readonly endpoint: string;
  /** Pid while running. */
  readonly pid: number | undefined;
  /** SIGKILL, data kept so restart() rejoins the cluster as the same member. */
  kill(): Promise<void>;
  /** SIGTERM, data kept. */
  stop(): Promise<void>;
  /** SIGSTOP: the member hangs (connections stay open, nothing answers). */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Starts the member again on the same ports with its data; resolves once it is healthy. */
  restart(): Promise<void>;
  /** True while its process runs. */
  readonly running: boolean;
}

/** A running etcd cluster started by a test on free loopback ports. */
export interface EtcdClusterHandle {
  /** Client URLs of every member, for `new Etcd3({ hosts: endpoints })`. */
  readonly endpoints: string[];
  readonly members: readonly EtcdMemberHandle[];
  /** The member that is the raft leader now (asks the running members). */
  leader(): Promise<EtcdMemberHandle>;
  /** A running member that is not the leader. */
  follower(): Promise<EtcdMemberHandle>;
  /** Stops every member and removes their data dirs. */
  stop(): Promise<void>;
}

/** How long leader() waits for the running members to agree on a leader. */
const LEADER_TIMEOUT_MS = 15_000;

/**
 * Starts an etcd cluster of `size` members (default 3) on free loopback ports, each with its own
 * temp data dir, and resolves once every member reports healthy (a leader is elected). For tests
 * of leader loss, follower loss and quorum loss with the real election.
 *
 * @example
 * const etcd = await startEtcdCluster();
 * const leader = await etcd.leader();
 * await leader.kill(); // the two others elect a new leader
 * await leader.restart();
 * await etcd.stop();
 */
export async function startEtcdCluster(
  options: EtcdClusterOptions = {},
): Promise<EtcdClusterHandle> {
  const size = options.size ?? 3;
  if (!Number.isInteger(size) || size < 1) {
    throw new TestkitError(`size must be an integer >= 1, got ${size}`);
  }
  const ports = await Promise.all(Array.from({ length: size * 2 }, () => freePort()));
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `m${i}`,
    client: `http://127.0.0.1:${ports[i * 2]}`,
    peer: `http://127.0.0.1:${ports[i * 2 + 1]}`,
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peer}`).join(',');
  const token = `granary-${process.pid}-${ports[0]}`;
  const servers = specs.map(
    (s) =>
      new ManagedServer({
        binary: options.binary ?? '/usr/bin/etcd',
        debianPackage: 'etcd-server',
        label: `etcd-${s.name}`,
        args: (dataDir) => [
          `--name=${s.name}`,
          `--data-dir=${dataDir}`,
          `--listen-client-urls=${s.client}`,
          `--advertise-client-urls=${s.client}`,
          `--listen-peer-urls=${s.peer}`,
          `--initial-advertise-peer-urls=${s.peer}`,
          `--initial-cluster=${initialCluster}`,
          `--initial-cluster-token=${token}`,
          '--initial-cluster-state=new',
          '--log-level=error',
          '--logger=zap',
          ...(options.extraArgs ?? []),
        ],
        probe: () => healthy(s.client),
      }),
  );
  // Members wait for each other to elect a leader: start them together.
  const started = await Promise.allSettled(servers.map((s) => s.start()));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((s) => s.kill()));
    throw failed.reason;
  }
  const members: EtcdMemberHandle[] = specs.map((s, i) => {
    const server = servers[i];
    return {
      name: s.name,
      endpoint: s.client,
      get pid() {
        return server.pid;
      },
      get running() {
        return server.pid !== undefined;
      },
      kill: () => server.kill({ keepData: true }),
      stop: () => server.stop({ keepData: true }),
      pause: () => server.pause(),
      resume: () => server.resume(),
      restart: () => server.restart(),
    };
  });
  const leader = async (): Promise<EtcdMemberHandle> => {
    const deadline = Date.now() + LEADER_TIMEOUT_MS;
    for (;;) {
      const ids = await Promise.all(
        members.map((m) => (m.running ? status(m.endpoint).catch(() => undefined) : undefined)),
      );
      const leaderId = ids.find((st) => st && st.leader !== '0')?.leader;
      const index = ids.findIndex((st) => st !== undefined && st.memberId === leaderId);
      if (index >= 0) return members[index];
      if (Date.now() > deadline) {
        throw new TestkitError(`no etcd leader elected within ${LEADER_TIMEOUT_MS} ms`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    endpoints: specs.map((s) => s.client),
    members,
    leader,
    follower: async () => {
      const l = await leader();
      const f = members.find((m) => m !== l && m.running);
      if (!f) throw new TestkitError('no running follower');
      return f;
    },
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop({ keepData: false } satisfies StopOptions)));
    },
  };
}

async function healthy(clientUrl: string): Promise<boolean> {
  const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(500) });
  const body = (await res.json()) as { health?: string };
  return body.health === 'true';
}

/** Member id and the leader it follows, from etcd's JSON gateway (ids are uint64 strings). */
async function status(clientUrl: string): Promise<{ memberId: string; leader: string }> {
  const res = await fetch(`${clientUrl}/v3/maintenance/status`, {
    method: 'POST',
    body: '{}',
    signal: AbortSignal.timeout(500),
  });
  const body = (await res.json()) as { header?: { member_id?: string }; leader?: string };
  return { memberId: String(body.header?.member_id ?? ''), leader: String(body.leader ?? '0') };
}
