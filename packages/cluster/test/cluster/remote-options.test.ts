import { expect } from 'chai';
import { InsecureRemoteError, PID, Props } from '@granary/core';
import { Cluster } from '../../src/cluster';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

const SECRET = 'cluster-remote-options-secret-01';

describe('Cluster.start remote options', function () {
  this.timeout(20000);
  const clusters: Cluster[] = [];
  afterEach(async () => {
    await Promise.all(clusters.map((c) => c.shutdown({ graceful: false })));
    clusters.length = 0;
  });

  it('refuses to bind 0.0.0.0 without secret or tls', async () => {
    const table = new MemoryClusterTable();
    let error: unknown;
    try {
      clusters.push(
        await Cluster.start({
          name: 'open',
          provider: new MemoryProvider(table),
          remote: { host: '0.0.0.0', port: 0 },
        }),
      );
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(InsecureRemoteError);
    expect(table.topology().members).to.have.length(0);
  });

  it('passes secret to the remote: members with the same secret talk, the address is advertised', async () => {
    const table = new MemoryClusterTable();
    const start = (id: string): Promise<Cluster> =>
      Cluster.start({
        name: 'secret',
        id,
        provider: new MemoryProvider(table),
        remote: { host: '0.0.0.0', advertisedHost: '127.0.0.1', port: 0, secret: SECRET },
      });
    const a = await start('a');
    clusters.push(a);
    const b = await start('b');
    clusters.push(b);
    expect(a.address).to.match(/^127\.0\.0\.1:\d+$/);
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message === 'string') ctx.respond(`${ctx.message}!`);
      }),
      'echo',
    );
    const reply = await a.system.root.request(new PID(b.address, 'echo'), 'hi', {
      timeoutMs: 5000,
    });
    expect(reply).to.equal('hi!');
  });
});
