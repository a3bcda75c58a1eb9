// A program that is not a member: calls the Cart grain through a GranaryClient (etcd), and
// keeps calling while the test SIGKILLs the grain's host. Prints one JSON line per step.
import { GranaryClient } from '@granary/cluster';
import { CartClient } from './gen/shop/cart.granary';
import type { CartView } from './gen/shop/cart.granary';

const out = (o: object): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

async function nextLine(): Promise<string> {
  return new Promise((resolve) => process.stdin.once('data', (d) => resolve(String(d).trim())));
}

async function main(): Promise<void> {
  const client = await GranaryClient.connect({
    name: 'app',
    etcd: { endpoints: [process.env['APP_ETCD']!] },
    secret: process.env['APP_SECRET'],
    shardCounts: { 'shop.Cart': 16 },
  });
  try {
    const cart = CartClient.for(client, 'cart-1');
    let view: CartView | undefined;
    for (let i = 0; i < 5; i++) {
      view = await cart.add(
        {
          sku: `sku-${i}`,
          price: { currency: 'EUR', units: '3000000000' },
          stamp: { token: new Uint8Array([i, 255]) },
        },
        { timeoutMs: 10_000 },
      );
    }
    out({ step: 'before', view });
    process.stdin.resume();
    await nextLine(); // the test killed the host
    process.stdin.pause();
    let ok = 0;
    for (let i = 0; i < 20; i++) {
      view = await cart.view({}, { timeoutMs: 15_000, idempotent: true });
      ok++;
    }
    view = await cart.add({ sku: 'after', price: { units: '1' } }, { timeoutMs: 15_000 });
    out({ step: 'after', ok, view });
  } finally {
    await client.close();
  }
}

main().catch((err: unknown) => {
  out({ step: 'error', error: String(err), code: (err as { code?: string }).code });
  process.exitCode = 1;
});
