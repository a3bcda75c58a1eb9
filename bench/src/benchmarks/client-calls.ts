import { Cluster, GranaryClient, MemoryClusterTable, MemoryProvider, kind } from '@granary/cluster';
import { freePort } from '@granary/testkit';
import { defineBenchmark } from '../harness';

/** Calls per repetition, with IN_FLIGHT at a time: ~0.5-1 s each over loopback gRPC. */
const CALLS = 6_000;
/** Concurrent calls: a busy caller, as a web server in front of the cluster is. */
const IN_FLIGHT = 64;
const SECRET = 'client-calls-bench-secret';
const KIND = 'bench.Echo';

let host: Cluster | undefined;
let member: Cluster | undefined;
let client: GranaryClient | undefined;

/** Identities all owned by the host (the only member hosting the kind). */
const identities = Array.from({ length: 256 }, (_, i) => `e-${i}`);

async function run(caller: { request(k: string, id: string, m: unknown): Promise<unknown> }) {
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (next < CALLS) {
      const i = next++;
      await caller.request(KIND, identities[i % identities.length]!, { n: i });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return CALLS / (Number(process.hrtime.bigint() - start) / 1e9);
}

export const benchmark = defineBenchmark({
  name: 'client-calls',
  description:
    `${IN_FLIGHT} calls in flight to grains on another node over loopback gRPC with a secret: ` +
    'from a member that hosts nothing vs from a GranaryClient (not a member) learning the ' +
    'topology through a gateway',
  async setup() {
    const table = new MemoryClusterTable();
    const start = async (id: string, kinds: ReturnType<typeof kind>[]) =>
      Cluster.start({
        name: 'bench',
        id,
        provider: new MemoryProvider(table),
        kinds,
        remote: { host: '127.0.0.1', port: await freePort(), secret: SECRET },
      });
    host = await start('host', [kind(KIND, () => ({ receive: (ctx) => ctx.message }))]);
    member = await start('caller', []);
    client = await GranaryClient.connect({
      name: 'bench',
      gateways: [host.address],
      secret: SECRET,
    });
    // Every grain activated before measuring.
    await Promise.all(identities.map((id) => host!.request(KIND, id, 0)));
  },
  async teardown() {
    await client?.close();
    await Promise.all([member?.shutdown({ graceful: false }), host?.shutdown({ graceful: false })]);
  },
  cases: [
    { id: 'member', metric: 'calls_per_s', run: () => run(member!) },
    { id: 'granary-client', metric: 'calls_per_s', baseline: 'member', run: () => run(client!) },
  ],
});
