// What another language would do: plain grpc-js, the .proto files and nothing else.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

async function main(): Promise<void> {
  const [protos, port, identity] = process.argv.slice(2) as [string, string, string];
  const definition = protoLoader.loadSync('shop/cart.proto', {
    includeDirs: [protos],
    longs: String,
    defaults: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    shop: { Cart: grpc.ServiceClientConstructor };
  };
  const client = new loaded.shop.Cart(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('granary-identity', identity);
  const reply = await new Promise<unknown>((resolve, reject) =>
    (client as unknown as Record<string, Function>)['View']!.call(
      client,
      {},
      metadata,
      { deadline: Date.now() + 15_000 },
      (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res)),
    ),
  );
  process.stdout.write(`${JSON.stringify(reply)}\n`);
  client.close();
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ error: String(err) })}\n`);
  process.exitCode = 1;
});
