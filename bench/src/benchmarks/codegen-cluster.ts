import { Cluster, MemoryClusterTable, MemoryProvider, kind } from '@granary/cluster';
import { freePort } from '@granary/testkit';
import { PongerClient, PongerGrain, pongerKind } from '../gen/messages/protos.granary';
import type { PingMessage, PongMessage } from '../gen/messages/protos.granary';
import { defineBenchmark } from '../harness';

/** Sequential calls per repetition: ~0.5 s each over loopback gRPC. */
const CALLS = 2_000;
/** Regenerate ../gen with: granary-codegen packages/codegen/test/protos/messages/protos.proto -I packages/codegen/test/protos --out bench/src/gen */
const RAW_KIND = 'bench.RawPonger';

class Ponger extends PongerGrain {
  override ping(ping: PingMessage): PongMessage {
    return { cnt: ping.cnt };
  }
}

let a: Cluster | undefined;
let b: Cluster | undefined;
let target = '';

/** An identity whose shard node-b owns, so every call from node-a crosses gRPC. */
function identityOnB(kindName: string, prefix: string): string {
  for (let i = 0; i < 1_000; i++) {
    const id = `${prefix}-${i}`;
    if (a!.ownerOf(kindName, a!.shardOf(kindName, id))?.id === 'b') return id;
  }
  throw new Error('no identity among 1,000 candidates is owned by b');
}

export const benchmark = defineBenchmark({
  name: 'codegen-cluster',
  description:
    'sequential grain calls node-a -> node-b over loopback gRPC: the generated PongerClient.ping ' +
    '(protobuf payload in a GrainInvoke) vs cluster.request with a plain JSON object',
  async setup() {
    const table = new MemoryClusterTable();
    const kinds = [
      pongerKind(() => new Ponger()),
      kind(RAW_KIND, () => ({ receive: (ctx) => ({ cnt: (ctx.message as { cnt: number }).cnt }) })),
    ];
    const start = async (id: string) =>
      Cluster.start({
        name: 'bench',
        id,
        provider: new MemoryProvider(table),
        kinds,
        remote: { host: '127.0.0.1', port: await freePort() },
      });
    a = await start('a');
    b = await start('b');
    const first = a;
    const up = () => first.topology.members.some((m) => m.id === 'b' && m.status === 'up');
    if (!up()) {
      await new Promise<void>((resolve) => {
        const off = first.on('topology', () => {
          if (up()) {
            off();
            resolve();
          }
        });
      });
    }
    target = identityOnB(PongerGrain.kindName, 'p');
  },
  async teardown() {
    await Promise.all([a?.shutdown({ graceful: false }), b?.shutdown({ graceful: false })]);
  },
  cases: [
    {
      id: 'raw-request-json',
      metric: 'calls_per_s',
      run: async () => {
        const id = identityOnB(RAW_KIND, 'r');
        const start = process.hrtime.bigint();
        for (let i = 0; i < CALLS; i++) await a!.request(RAW_KIND, id, { cnt: i });
        return CALLS / (Number(process.hrtime.bigint() - start) / 1e9);
      },
    },
    {
      id: 'generated-client',
      metric: 'calls_per_s',
      baseline: 'raw-request-json',
      run: async () => {
        const client = PongerClient.for(a!, target);
        const start = process.hrtime.bigint();
        for (let i = 0; i < CALLS; i++) await client.ping({ cnt: String(i) });
        return CALLS / (Number(process.hrtime.bigint() - start) / 1e9);
      },
    },
  ],
});
