import * as grpc from '@grpc/grpc-js';
import { Cluster, MemoryClusterTable, MemoryProvider } from '@granary/cluster';
import { GrpcGateway } from '@granary/codegen/gateway';
import { freePort } from '@granary/testkit';
import { PingMessage, PongMessage, PongerGrain, pongerKind } from '../gen/messages/protos.granary';
import { defineBenchmark } from '../harness';

/** Calls per repetition, IN_FLIGHT at a time. */
const CALLS = 6_000;
/** Concurrent unary calls of the grpc-js client. */
const IN_FLIGHT = 64;
const PATH = '/messages.Ponger/Ping';

class Ponger extends PongerGrain {
  override ping(ping: PingMessage): PongMessage {
    return { cnt: ping.cnt };
  }
}

const pass = (b: Buffer): Buffer => b;
let cluster: Cluster | undefined;
let gateway: GrpcGateway | undefined;
let plain: grpc.Server | undefined;
let plainPort = 0;

/** What a plain grpc-js server does for Ping: decode the request, encode the same count back. */
function plainPing(
  call: grpc.ServerUnaryCall<Buffer, Buffer>,
  callback: grpc.sendUnaryData<Buffer>,
): void {
  const ping = PingMessage.decode(call.request);
  callback(null, Buffer.from(PongMessage.encode({ cnt: ping.cnt })));
}

/** `IN_FLIGHT` workers making `CALLS` unary calls in all; calls per second. */
async function run(port: number, withIdentity: boolean): Promise<number> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const request = Buffer.from(PingMessage.encode({ cnt: '42' }));
  let next = 0;
  const one = (i: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const md = new grpc.Metadata();
      if (withIdentity) md.set('granary-identity', `p-${i % 256}`);
      client.makeUnaryRequest(
        PATH,
        pass,
        pass,
        request,
        md,
        { deadline: Date.now() + 10_000 },
        (err) => (err ? reject(err) : resolve()),
      );
    });
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CALLS) await one(next++);
    }),
  );
  const rate = CALLS / (Number(process.hrtime.bigint() - start) / 1e9);
  client.close();
  return rate;
}

export const benchmark = defineBenchmark({
  name: 'gateway-calls',
  description:
    `${IN_FLIGHT} unary calls in flight from a plain grpc-js client: to a node's GrpcGateway ` +
    '(messages.Ponger/Ping served by a generated grain on that node) vs to a plain grpc-js ' +
    'server whose handler decodes the PingMessage and encodes the PongMessage',
  async setup() {
    cluster = await Cluster.start({
      name: 'bench',
      id: 'gw',
      provider: new MemoryProvider(new MemoryClusterTable()),
      kinds: [pongerKind(() => new Ponger())],
      remote: { host: '127.0.0.1', port: await freePort() },
    });
    gateway = await GrpcGateway.start({ cluster, services: [PongerGrain.kindName] });
    plain = new grpc.Server();
    plain.addService(
      {
        Ping: {
          path: PATH,
          requestStream: false,
          responseStream: false,
          requestSerialize: pass,
          requestDeserialize: pass,
          responseSerialize: pass,
          responseDeserialize: pass,
        },
      },
      { Ping: plainPing },
    );
    plainPort = await new Promise<number>((resolve, reject) =>
      plain!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
  },
  async teardown() {
    await gateway?.close();
    plain?.forceShutdown();
    await cluster?.shutdown({ graceful: false });
  },
  cases: [
    { id: 'plain-grpc-server', metric: 'calls_per_s', run: () => run(plainPort, false) },
    {
      id: 'granary-gateway',
      metric: 'calls_per_s',
      baseline: 'plain-grpc-server',
      run: () => run(gateway!.port, true),
    },
  ],
});
