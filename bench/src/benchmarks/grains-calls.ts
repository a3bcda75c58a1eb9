import { join } from 'node:path';
import { PID } from '@granary/core';
import { Cluster, EtcdProvider, type ClusterRemoteOptions } from '@granary/cluster';
import { silentLogger, TestCluster } from '@granary/testkit';
import { defineBenchmark, percentile, type BenchCase } from '../harness';
import { inFlightWarm } from '../in-flight';
import { BENCH_PROTO, ping } from '../remote/messages';

/** Calls per repetition (~1 s at 100k calls/s). */
const CALLS = 100_000;
const IN_FLIGHT = 1000;
/** Grains called (all activated in setup): 10 calls in flight per grain on average. */
const GRAINS = 100;
/** The grain-hosting member entry script of @granary/cluster's tests (built by `npm run build`). */
export const GRAIN_NODE = join(
  __dirname,
  '../../../packages/cluster/dist/test/grains/fixtures/grain-node.js',
);

let tc: TestCluster;
let client: Cluster;
let echo: PID;

/** One grain-hosting node process on a fresh etcd, and a client member in this process. */
export async function startPeerAndClient(
  name: string,
  size = 1,
  ttlSeconds = 3,
  remote: Omit<ClusterRemoteOptions, 'host' | 'port'> = {},
): Promise<{ tc: TestCluster; client: Cluster }> {
  const cluster = await TestCluster.start({
    size,
    etcd: true,
    script: GRAIN_NODE,
    config: (ctx) => ({
      etcdEndpoints: ctx.etcdEndpoints,
      id: ctx.id,
      cluster: name,
      ttlSeconds,
      shardCount: 256,
      idleTimeoutMs: 600_000,
      proto: BENCH_PROTO,
      remote,
    }),
  });
  const c = await Cluster.start({
    name,
    id: 'bench-client',
    provider: new EtcdProvider({
      endpoints: cluster.etcd!.endpoints,
      ttlSeconds,
      prefix: '/granary-grains',
      logger: silentLogger,
    }),
    kinds: [],
    remote: { host: '127.0.0.1', port: 0, ...remote },
    logger: silentLogger,
  });
  await cluster.waitForConvergence();
  return { tc: cluster, client: c };
}

const msg = (n: number): { n: number } => ({ n });
// 'mirror' answers with the message, like the plain echo actor of the baseline case (the
// fixture's 'echo' grain adds its activation id and member, a larger reply than the baseline's).
const grainCall = (n: number): Promise<unknown> =>
  client.request('mirror', `g-${n % GRAINS}`, msg(n), { timeoutMs: 30_000 });
const remoteCall = (n: number): Promise<unknown> =>
  client.system.root.request(echo, msg(n), { timeoutMs: 30_000 });
// The same calls with a protobuf message (bench.Ping, ~12 bytes), as users who describe their
// messages in .proto files send them: the remote-request benchmark's message.
const grainCallPb = (n: number): Promise<unknown> =>
  client.request('mirror', `g-${n % GRAINS}`, ping(n), { timeoutMs: 30_000 });
const remoteCallPb = (n: number): Promise<unknown> =>
  client.system.root.request(echo, ping(n), { timeoutMs: 30_000 });

type Call = (n: number) => Promise<unknown>;

/**
 * Throughput and p99 of grain calls against plain remote request/response, one message kind:
 * ids `remote-request-inflight-1000<suffix>`, `grain-calls-inflight-1000<suffix>` and their
 * `-p99` cases (the grain cases have the remote ones as baseline).
 */
function callCases(suffix: string, remote: Call, grain: Call): BenchCase[] {
  const remoteId = `remote-request-inflight-1000${suffix}`;
  const grainId = `grain-calls-inflight-1000${suffix}`;
  const rate = (call: Call) => async () => (await inFlightWarm(CALLS, IN_FLIGHT, call)).perSecond;
  const p99 = (call: Call) => async () =>
    percentile((await inFlightWarm(CALLS, IN_FLIGHT, call)).latencies, 99);
  return [
    { id: remoteId, metric: 'req_per_s', run: rate(remote) },
    { id: grainId, metric: 'calls_per_s', baseline: remoteId, run: rate(grain) },
    { id: `${remoteId}-p99`, metric: 'p99_ms', run: p99(remote) },
    { id: `${grainId}-p99`, metric: 'p99_ms', baseline: `${remoteId}-p99`, run: p99(grain) },
  ];
}

export const benchmark = defineBenchmark({
  name: 'grains-calls',
  description:
    'grain calls from a client member to grains already active in another node process (etcd ' +
    'membership), 1,000 in flight, vs plain remote request/response to an actor in that process; ' +
    'with a JSON object and with a protobuf message',
  repeats: 5,
  async setup() {
    ({ tc, client } = await startPeerAndClient('bench-calls'));
    const ready = tc.nodes[0]!.process!.lines.find((l) => l.data.type === 'ready')!;
    echo = new PID(ready.data.address as string, 'echo');
    await remoteCall(0);
    await remoteCallPb(0);
    for (let i = 0; i < GRAINS; i++) await grainCall(i);
  },
  async teardown() {
    await client.shutdown({ graceful: false });
    await tc.stop();
  },
  cases: [
    ...callCases('', remoteCall, grainCall),
    ...callCases('-protobuf', remoteCallPb, grainCallPb),
  ],
});
