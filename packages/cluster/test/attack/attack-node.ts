// The node under attack, started as users start one: Cluster.start with the seed provider (it
// is the seed), a grain kind, and the remote on loopback with no secret, a secret, or mutual
// TLS (argv[2]: JSON { secret?, tls? }). Logs JSON lines to stderr at info (what the suite
// counts), and prints to stdout `{ type: 'ready', address }`, then `{ type: 'rss', rss }` every
// 100 ms. Exits when its parent goes away.
import { createStderrLogger } from '@granary/core';
import { Cluster } from '../../src/cluster';
import type { ClusterRemoteOptions } from '../../src/cluster-options';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { SeedProvider } from '../../src/providers/seed/seed-provider';

/** Answers with the message itself. */
class Mirror implements Grain {
  receive(ctx: GrainContext): unknown {
    return ctx.message;
  }
}

async function main(): Promise<void> {
  const remote = JSON.parse(process.argv[2] ?? '{}') as Omit<ClusterRemoteOptions, 'host' | 'port'>;
  const logger = createStderrLogger('info');
  const cluster = await Cluster.start({
    name: 'attacked',
    id: 'node',
    provider: new SeedProvider({ isSeed: true, logger }),
    kinds: [kind('mirror', () => new Mirror(), { shardCount: 16 })],
    remote: { host: '127.0.0.1', port: 0, ...remote },
    logger,
  });
  process.on('disconnect', () => process.exit(0));
  process.stdout.write(`${JSON.stringify({ type: 'ready', address: cluster.address })}\n`);
  setInterval(() => {
    process.stdout.write(`${JSON.stringify({ type: 'rss', rss: process.memoryUsage().rss })}\n`);
  }, 100);
}

void main();
