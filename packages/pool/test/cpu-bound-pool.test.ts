import * as path from 'node:path';
import { expect } from 'chai';
import { Cluster, EtcdProvider } from '@granary/cluster';
import { type EtcdHandle, NodeProcess, silentLogger, startEtcd } from '@granary/testkit';
import { PoolClient } from '../src/cluster/pool-client';
import { iterationsFor, type SpinDone } from './fixtures/spin-job';

const NODES = 3;
const WORKERS = 12;
const THREADS = 2;
const BATCHES = 4;
/** A job's deadline: a batch of 12 shares 2 cores, so a job may take ~6 × its CPU time. */
const JOB_TIMEOUT_MS = 60_000;

describe('CPU-bound pool jobs in worker threads: 3 node processes on etcd at default lease settings', function () {
  this.timeout(180_000);
  let etcd: EtcdHandle;
  let caller: Cluster;
  const nodes: NodeProcess[] = [];

  before(async () => {
    etcd = await startEtcd();
    for (let i = 0; i < NODES; i++) {
      nodes.push(
        NodeProcess.spawn({
          script: path.join(__dirname, 'fixtures/cpu-pool-node.js'),
          config: {
            etcdEndpoints: etcd.endpoints,
            id: `cpu-${i}`,
            cluster: 'cpu-pool',
            size: WORKERS,
            threads: THREADS,
          },
          label: `cpu-${i}`,
        }),
      );
    }
    await Promise.all(nodes.map((n) => n.waitFor((l) => l.type === 'ready', 20_000)));
    caller = await Cluster.start({
      name: 'cpu-pool',
      id: 'caller',
      provider: new EtcdProvider({ endpoints: etcd.endpoints, logger: silentLogger }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0 },
      logger: silentLogger,
    });
  });
  after(async () => {
    await caller?.shutdown({ graceful: false });
    await Promise.all(nodes.map((n) => n.kill()));
    await etcd?.stop();
  });

  for (const jobMs of [270, 1000]) {
    it(`${BATCHES} batches of ${WORKERS} jobs of ${jobMs} ms: 0 failed jobs, 0 fenced nodes, every job off the event loop`, async () => {
      const pool = PoolClient.get(caller, 'cpu');
      await pool.refresh();
      expect(Object.keys((await pool.stats()).perMember)).to.have.length(NODES);
      const iterations = iterationsFor(jobMs); // jobMs of CPU on an idle core
      const failures: string[] = [];
      let done = 0;
      for (let b = 0; b < BATCHES; b++) {
        await Promise.all(
          Array.from({ length: WORKERS }, () =>
            pool
              .request<SpinDone>({ iterations }, { timeoutMs: JOB_TIMEOUT_MS })
              .then((r) => {
                expect(r.thread, 'the job ran in a worker thread').to.be.greaterThan(0);
                done++;
              })
              .catch((err: Error) => failures.push(`${err.name}: ${err.message}`)),
          ),
        );
      }
      const fenced = nodes.flatMap((n) =>
        n.lines.filter((l) => l.data.type === 'lease' && l.data.state === 'lost'),
      );
      const mark = nodes.map((n) => n.lines.length);
      nodes.forEach((n) => n.send({ cmd: 'report' }));
      const reports = await Promise.all(
        nodes.map((n, i) => n.waitFor((l) => l.type === 'report', 5000, mark[i])),
      );
      const delays = reports.map((r) => r.data.maxLoopDelayMs as number);
      console.log(
        `      ${jobMs} ms jobs: ${done} done, ${failures.length} failed, ${fenced.length} fenced; max event-loop delay per node ${delays.join(', ')} ms`,
      );
      expect(failures, failures.slice(0, 3).join('\n')).to.deep.equal([]);
      expect(done).to.equal(BATCHES * WORKERS);
      expect(fenced.map((l) => l.data.node)).to.deep.equal([]);
    });
  }
});
