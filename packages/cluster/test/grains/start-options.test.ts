import { createServer } from 'node:net';
import { InvalidArgumentError, InvalidOptionError } from '@granary/core';
import { expect } from 'chai';
import { freePort } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import { kind, type KindOptions } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

const grain = () => ({ receive: () => 1 });

describe('Cluster.start grain options', () => {
  it('kind() rejects bad options naming the option', () => {
    expect(() => kind('a/b', grain))
      .to.throw(InvalidArgumentError)
      .with.property('argument', 'name');
    expect(() => kind('k', grain, { idleTimeoutMs: 0 }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'idleTimeoutMs');
    expect(() => kind('k', grain, { mailbox: { capacity: 0 } }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'mailbox.capacity');
    expect(() => kind('k', grain, { shardCount: 1.5 }))
      .to.throw(InvalidOptionError)
      .with.property('option', 'shardCount');
  });

  it('kind() takes an option given as undefined for its default (it threw "got undefined")', () => {
    const config: Record<string, unknown> = { idleTimeoutMs: undefined, longTurnMs: undefined };
    const def = kind('k', grain, config as KindOptions);
    expect(def).to.include({ idleTimeoutMs: 60_000, longTurnMs: 1000 });
  });

  it('kind() refuses an option it does not know, naming it and the one meant', () => {
    // From JavaScript or a config object: no excess-property check catches it.
    const options: Record<string, unknown> = { idleTimeout: 5_000 };
    expect(() => kind('k', grain, options as KindOptions))
      .to.throw(InvalidOptionError, /idleTimeout.*idleTimeoutMs/)
      .with.property('option', 'idleTimeout');
  });

  it('Cluster.start refuses an option it does not know before starting anything, naming the one meant', async () => {
    const options = { name: 'x', provider: new MemoryProvider(new MemoryClusterTable()), kind: [] };
    const err = await Cluster.start(options).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'kind');
    expect((err as Error).message).to.include("'kinds'");
    const far = { name: 'x', provider: new MemoryProvider(new MemoryClusterTable()), colour: 1 };
    const err2 = await Cluster.start(far).catch((e: unknown) => e);
    expect(err2).to.be.instanceOf(InvalidOptionError).with.property('option', 'colour');
  });

  it('rejects requestTimeoutMs <= 0 before starting anything', async () => {
    const err = await Cluster.start({
      name: 'x',
      provider: new MemoryProvider(new MemoryClusterTable()),
      requestTimeoutMs: 0,
    }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'requestTimeoutMs');
  });

  it('a start that fails after the remote started closes it again (the port is free)', async () => {
    const port = await freePort();
    const err = await Cluster.start({
      name: 'x',
      provider: new MemoryProvider(new MemoryClusterTable()),
      kinds: [kind('dup', grain), kind('dup', grain)],
      remote: { host: '127.0.0.1', port },
    }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'kinds');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    await new Promise((r) => server.close(r));
  });

  it('request on a member that has shut down rejects with ClusterStoppedError', async () => {
    const c = await Cluster.start({
      name: 'x',
      provider: new MemoryProvider(new MemoryClusterTable()),
      kinds: [kind('k', grain)],
    });
    await c.shutdown();
    const err = await c.request('k', 'a', 1).catch((e: unknown) => e);
    expect(err).to.have.property('code', 'ERR_CLUSTER_STOPPED');
  });
});
