import { expect } from 'chai';
import { freePort } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import { NoTransportError } from '../../src/errors';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { quiet } from './memory-nodes';

const echo = kind('echo', () => ({ receive: () => 'hi' }), { shardCount: 8 });

describe('a member without a transport', function () {
  this.timeout(20_000);

  it('tells a caller it needs remote or a GranaryClient, at once', async () => {
    const table = new MemoryClusterTable();
    const withRemote = await Cluster.start({
      name: 'nt',
      id: 'a',
      provider: new MemoryProvider(table),
      kinds: [echo],
      remote: { host: '127.0.0.1', port: await freePort() },
      logger: quiet,
    });
    const bare = await Cluster.start({ name: 'nt', id: 'b', provider: new MemoryProvider(table) });
    try {
      const started = Date.now();
      const err = await bare
        .request('echo', 'x', 'hi', { timeoutMs: 3000 })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NoTransportError);
      expect((err as Error).message)
        .to.contain('remote')
        .and.to.contain('GranaryClient');
      expect(Date.now() - started).to.be.lessThan(1000);
    } finally {
      await bare.shutdown({ graceful: false });
      await withRemote.shutdown({ graceful: false });
    }
  });
});
