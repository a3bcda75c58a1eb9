// One member: etcd membership, Redis state declared on the generated Cart kind, a gRPC gateway.
import { Cluster, EtcdProvider, RedisStateStore, protobufStateCodec } from '@granary/cluster';
import { GrpcGateway } from '@granary/codegen/gateway';
import { Cart } from './cart';
import { CartState, cartKind } from './gen/shop/cart.granary';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

async function main(): Promise<void> {
  const store = new RedisStateStore({ url: env('APP_REDIS') });
  const cluster = await Cluster.start({
    name: 'app',
    id: env('APP_ID'),
    provider: new EtcdProvider({ endpoints: [env('APP_ETCD')], ttlSeconds: 2 }),
    kinds: [
      cartKind(() => new Cart(), {
        state: { store, codec: protobufStateCodec(CartState), initial: () => CartState.create() },
      }),
    ],
    remote: { host: '127.0.0.1', port: Number(env('APP_PORT')), secret: env('APP_SECRET') },
    shardCount: 16,
  });
  const gateway = await GrpcGateway.start({ cluster, port: Number(env('APP_GATEWAY_PORT')) });
  process.stdout.write(`ready ${cluster.id}\n`);
  const stop = async (): Promise<void> => {
    await gateway.close();
    await cluster.shutdown();
    await store.close();
  };
  process.once('SIGTERM', () => void stop());
  process.stdin.resume();
  process.stdin.once('end', () => void stop().then(() => process.stdin.pause()));
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exitCode = 1;
});
