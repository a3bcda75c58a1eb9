import { fork, type ChildProcess } from 'node:child_process';
import { pbkdf2Sync } from 'node:crypto';
import * as path from 'node:path';
import { Cluster, EtcdProvider } from '@granary/cluster';
import { PoolClient } from '@granary/pool';
import { startEtcd, type EtcdHandle } from '@granary/testkit';
import { defineBenchmark } from '../harness';
import { POOL_MAX_IN_FLIGHT, POOL_SIZE, POOL_THREADS } from '../pool/pool-bench-config';

/** Requests per repetition: ~1 s on one member at ~1 ms each. */
const REQUESTS = 1000;
/** Calls kept in flight by the caller: every worker busy (size × maxInFlight). */
const IN_FLIGHT = POOL_SIZE * POOL_MAX_IN_FLIGHT;
/** Target CPU time of one request's hashing. */
const WORK_MS = 1;
const NAME = 'pool-bench';

let etcd: EtcdHandle | undefined;
let caller: Cluster | undefined;
const children: ChildProcess[] = [];

/**
 * pbkdf2 iterations that take about WORK_MS of CPU on this machine: the fastest of several
 * probes, so a probe slowed by other processes does not shrink the work.
 */
function calibrate(): number {
  const probe = 20_000;
  pbkdf2Sync('warm', 'granary', probe, 32, 'sha256');
  let fastest = Infinity;
  for (let i = 0; i < 10; i++) {
    const t0 = process.hrtime.bigint();
    pbkdf2Sync('x', 'granary', probe, 32, 'sha256');
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return Math.max(1, Math.round((probe * WORK_MS) / fastest));
}

function startMember(id: string, pools: string, iterations: number): Promise<void> {
  const child = fork(
    path.join(__dirname, '../pool/pool-node.js'),
    [etcd!.endpoints[0]!, NAME, id, String(iterations), pools],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`pool member ${id} exited (${code})`)));
  });
}

/** REQUESTS calls through the pool client with IN_FLIGHT outstanding; resolves with req/s. */
async function throughput(pool: string): Promise<number> {
  const client = PoolClient.get(caller!, pool);
  await client.refresh();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < REQUESTS) await client.request(next++, { timeoutMs: 30_000 });
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return REQUESTS / (Number(process.hrtime.bigint() - t0) / 1e9);
}

export const benchmark = defineBenchmark({
  name: 'pool-cluster',
  description: `cluster pool of ${POOL_SIZE} CPU-bound workers (~${WORK_MS} ms of pbkdf2 per request): spread over 2 member processes vs all in 1, on the members' event loops and in ${POOL_THREADS} worker threads per member`,
  repeats: 5,
  async setup() {
    etcd = await startEtcd();
    const iterations = calibrate();
    // Member a hosts every pool; b hosts only the "two" ones. So "one" runs all its workers in
    // a, "two" spreads them over a and b: same processes, same run. The "-threads" pools hash in
    // POOL_THREADS worker threads per member instead of on the member's event loop.
    await startMember('a', 'one,two,one-threads,two-threads', iterations);
    await startMember('b', 'two,two-threads', iterations);
    caller = await Cluster.start({
      name: NAME,
      id: 'caller',
      provider: new EtcdProvider({ endpoints: etcd.endpoints }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0 },
    });
  },
  async teardown() {
    await caller?.shutdown({ graceful: false });
    for (const child of children) child.kill('SIGKILL');
    await etcd?.stop();
  },
  cases: [
    { id: 'one-member-process', metric: 'req_per_s', run: () => throughput('one') },
    {
      id: 'two-member-processes',
      metric: 'req_per_s',
      baseline: 'one-member-process',
      run: () => throughput('two'),
    },
    {
      id: 'one-member-process-threads',
      metric: 'req_per_s',
      baseline: 'one-member-process',
      run: () => throughput('one-threads'),
    },
    {
      id: 'two-member-processes-threads',
      metric: 'req_per_s',
      baseline: 'one-member-process-threads',
      run: () => throughput('two-threads'),
    },
  ],
});
