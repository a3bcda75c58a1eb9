import { Cluster, EtcdProvider } from '@granary/cluster';
import { silentLogger, TestCluster } from '@granary/testkit';
import { benchTelemetry, type BenchTelemetry } from '@granary/testkit/telemetry';
import { defineBenchmark, type BenchCase } from '../harness';
import { inFlightWarm, type AroundCall } from '../in-flight';
import { GRAIN_NODE } from './grains-calls';

/** Calls per repetition (~1 s at 100k calls/s), as grains-calls. */
const CALLS = 100_000;
const IN_FLIGHT = 1000;
const GRAINS = 100;
/**
 * With BENCH_SDK_ONLY=1, also `sdk-metrics` and `sdk-traces`: members that record nothing while
 * the loop (caller) and the grain (owner) make the SDK calls Granary makes per call and turn:
 * the SDK's own cost in the same run, to tell it from Granary's (`@granary/testkit`
 * bench-sdk-only.ts). Off by default: their two more node processes and etcd servers, idle
 * while the other cases run, took 5-10% off every case's rate on the 2-core machine, so runs
 * with and without them are not comparable.
 */
const MODES: readonly BenchTelemetry[] = process.env.BENCH_SDK_ONLY
  ? ['none', 'metrics', 'traces', 'sdk-metrics', 'sdk-traces']
  : ['none', 'metrics', 'traces'];
const IDENTITIES = Array.from({ length: GRAINS }, (_, i) => `g-${i}`);

interface Setup {
  tc: TestCluster;
  client: Cluster;
  spansExported(): number;
  around: AroundCall | undefined;
  shutdown(): Promise<void>;
}

const setups = new Map<BenchTelemetry, Setup>();

/** A node process and a client member, both recording as `mode` says, on their own etcd. */
async function start(mode: BenchTelemetry): Promise<Setup> {
  const name = `bench-telemetry-${mode}`;
  const tc = await TestCluster.start({
    size: 1,
    etcd: true,
    script: GRAIN_NODE,
    config: (ctx) => ({
      etcdEndpoints: ctx.etcdEndpoints,
      id: ctx.id,
      cluster: name,
      ttlSeconds: 3,
      shardCount: 256,
      idleTimeoutMs: 600_000,
      telemetry: mode,
    }),
  });
  const telemetry = benchTelemetry(mode, 'bench-client');
  const client = await Cluster.start({
    name,
    id: 'bench-client',
    provider: new EtcdProvider({
      endpoints: tc.etcd!.endpoints,
      ttlSeconds: 3,
      prefix: '/granary-grains',
      logger: silentLogger,
    }),
    remote: { host: '127.0.0.1', port: 0 },
    logger: silentLogger,
    telemetry: telemetry.options,
  });
  await tc.waitForConvergence();
  for (let i = 0; i < GRAINS; i++) await call(client)(i);
  const sdk = telemetry.sdk;
  const around: AroundCall | undefined =
    sdk === undefined
      ? undefined
      : { begin: (n) => sdk.begin('mirror', IDENTITIES[n % GRAINS]!), end: (h) => sdk.end(h) };
  return {
    tc,
    client,
    spansExported: telemetry.spansExported,
    around,
    shutdown: telemetry.shutdown,
  };
}

const call =
  (client: Cluster) =>
  (n: number): Promise<unknown> =>
    client.request('mirror', `g-${n % GRAINS}`, { n }, { timeoutMs: 30_000 });

function rate(mode: BenchTelemetry): BenchCase {
  return {
    id: `grain-calls-inflight-1000-${mode}`,
    metric: 'calls_per_s',
    ...(mode === 'none' ? {} : { baseline: 'grain-calls-inflight-1000-none' }),
    run: async () => {
      const setup = setups.get(mode)!;
      const before = setup.spansExported();
      const { perSecond } = await inFlightWarm(CALLS, IN_FLIGHT, call(setup.client), setup.around);
      if (mode === 'traces' || mode === 'sdk-traces') {
        // Every call's client span is exported (the warm-up's calls too): a processor that
        // dropped spans would show here as fewer than one per measured call.
        const perCall = (setup.spansExported() - before) / CALLS;
        process.stderr.write(`  client spans exported per measured call: ${perCall.toFixed(2)}\n`);
      }
      return perSecond;
    },
  };
}

/**
 * The cost of telemetry on grain calls between two processes (1,000 in flight, JSON messages):
 * no SDK registered, metrics recording into an SDK MeterProvider, and every call traced (100%
 * sampling, exported in batches as an application's SDK does) into an in-memory exporter, in
 * both processes; and, to tell the SDK's own cost from Granary's, members that record nothing
 * while the benchmark makes the same SDK calls (sdk-metrics, sdk-traces). Each mode has its own
 * node process and client member; the cases alternate within each repetition, so the ratios
 * compare the same minutes of the machine.
 */
export const benchmark = defineBenchmark({
  name: 'grains-calls-telemetry',
  description:
    'grain calls from a client member to a node process, 1,000 in flight: no OpenTelemetry SDK, ' +
    'metrics recording (SDK MeterProvider), and 100% tracing (BatchSpanProcessor) into an ' +
    'in-memory exporter; and the same SDK calls made without Granary (sdk-metrics, sdk-traces)',
  repeats: 5,
  async setup() {
    for (const mode of MODES) setups.set(mode, await start(mode));
  },
  async teardown() {
    for (const s of setups.values()) {
      await s.client.shutdown({ graceful: false });
      await s.tc.stop();
      await s.shutdown();
    }
  },
  cases: MODES.map(rate),
});
