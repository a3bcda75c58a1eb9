import { expect } from 'chai';
import { errorsOnlyLogger, waitUntil } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { Grain } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { pointsOf, startTestSdk, valueOf, type TestSdk } from './fixtures/test-sdk';

class Counter implements Grain {
  private n = 0;
  receive(): unknown {
    return ++this.n;
  }
}

class Fail implements Grain {
  receive(): unknown {
    throw new Error('no');
  }
}

class Slow implements Grain {
  receive(): unknown {
    return new Promise((resolve) => setTimeout(() => resolve('late'), 300));
  }
}

class Broken implements Grain {
  onActivate(): void {
    throw new Error('cannot load');
  }
  receive(): unknown {
    return 'never';
  }
}

const KINDS = () => [
  kind('counter', () => new Counter(), { shardCount: 4, idleTimeoutMs: 200 }),
  kind('fail', () => new Fail(), { shardCount: 2 }),
  kind('slow', () => new Slow(), { shardCount: 2 }),
  kind('broken', () => new Broken(), { shardCount: 2 }),
];

describe('Cluster metrics after a known workload (SDK MeterProvider, in-memory reader)', function () {
  this.timeout(20_000);
  const table = new MemoryClusterTable();
  const activationListeners = new Set<() => void>();
  const onActivationEvent = (l: () => void): (() => void) => {
    activationListeners.add(l);
    return () => activationListeners.delete(l);
  };
  let hostSdk: TestSdk;
  let callerSdk: TestSdk;
  let host: Cluster;
  let caller: Cluster;

  const start = (id: string, kinds: ReturnType<typeof KINDS>, sdk: TestSdk) =>
    Cluster.start({
      name: 'metrics',
      id,
      provider: new MemoryProvider(table, { ttlMs: 1000 }),
      kinds,
      remote: { host: '127.0.0.1', port: 0 },
      claimRetryMs: 100,
      logger: errorsOnlyLogger,
      telemetry: { meterProvider: sdk.meterProvider },
      onActivation: () => {
        for (const l of [...activationListeners]) l();
      },
    });

  before(async () => {
    hostSdk = startTestSdk(false);
    callerSdk = startTestSdk(false);
    host = await start('host', KINDS(), hostSdk);
    caller = await start('caller', [], callerSdk);
    await waitUntil(
      () =>
        caller.topology.members.length === 2 &&
        host.heldShards('counter').length === 4 &&
        host.heldShards('fail').length === 2 &&
        host.heldShards('slow').length === 2 &&
        host.heldShards('broken').length === 2,
      'the host holds every shard and the caller sees it',
      {
        on: [(l) => host.on('shard-acquired', l), (l) => caller.on('topology', l)],
        timeoutMs: 10_000,
      },
    );
  });

  after(async () => {
    await caller?.shutdown({ graceful: false });
    await host?.shutdown({ graceful: false });
    await hostSdk?.shutdown();
    await callerSdk?.shutdown();
  });

  it('counts claims, calls by outcome, activations and deactivations by reason exactly', async () => {
    for (let i = 0; i < 5; i++) {
      for (let j = 0; j < 2; j++) await caller.request('counter', `c-${i}`, { i, j });
    }
    for (let i = 0; i < 3; i++) {
      await caller.request('fail', `f-${i}`, { i }).then(
        () => expect.fail('fail answered'),
        () => undefined,
      );
    }
    await caller.request('slow', 's-0', { wait: true }, { timeoutMs: 100 }).then(
      () => expect.fail('slow answered in time'),
      () => undefined,
    );
    await caller.request('broken', 'b-0', { x: 1 }).then(
      () => expect.fail('broken answered'),
      () => undefined,
    );

    const c = await callerSdk.collect();
    expect(
      valueOf(c, 'granary.grain.calls', {
        'granary.grain.kind': 'counter',
        'granary.call.outcome': 'ok',
      }),
    ).to.equal(10);
    expect(
      valueOf(c, 'granary.grain.calls', {
        'granary.grain.kind': 'fail',
        'granary.call.outcome': 'app_error',
      }),
    ).to.equal(3);
    expect(
      valueOf(c, 'granary.grain.calls', {
        'granary.grain.kind': 'slow',
        'granary.call.outcome': 'deadline_exceeded',
      }),
    ).to.equal(1);
    expect(
      valueOf(c, 'granary.grain.calls', {
        'granary.grain.kind': 'broken',
        'granary.call.outcome': 'app_error',
      }),
    ).to.equal(1);
    const durations = pointsOf(c, 'granary.grain.call.duration');
    const okCounter = durations.find(
      (p) =>
        p.attributes['granary.grain.kind'] === 'counter' &&
        p.attributes['granary.call.outcome'] === 'ok',
    );
    expect(okCounter?.count).to.equal(10);
    expect(okCounter?.attributes['rpc.method']).to.equal('object');
    // The caller hosts nothing: its claims are none.
    expect(pointsOf(c, 'granary.shard.claims').filter((p) => p.value > 0)).to.deep.equal([]);

    const h = await hostSdk.collect();
    for (const [k, shards] of [
      ['counter', 4],
      ['fail', 2],
      ['slow', 2],
      ['broken', 2],
    ] as const) {
      const kindAttr = { 'granary.grain.kind': k };
      expect(
        valueOf(h, 'granary.shard.claims', { ...kindAttr, 'granary.outcome': 'acquired' }),
        k,
      ).to.equal(shards);
      expect(
        valueOf(h, 'granary.shard.claims', { ...kindAttr, 'granary.outcome': 'conflict' }),
        k,
      ).to.equal(0);
      expect(valueOf(h, 'granary.shards.held', kindAttr), k).to.equal(shards);
    }
    expect(valueOf(h, 'granary.grain.activations', { 'granary.grain.kind': 'counter' })).to.equal(
      5,
    );
    expect(valueOf(h, 'granary.grain.activations', { 'granary.grain.kind': 'fail' })).to.equal(3);
    const activations = pointsOf(h, 'granary.grain.activation.duration');
    const failed = activations.find((p) => p.attributes['granary.outcome'] === 'failed');
    expect(failed?.attributes['granary.grain.kind']).to.equal('broken');
    expect(failed?.count).to.equal(1);
    // Every activation is timed: 5 counters, 3 fail, 1 slow, 1 broken.
    expect(activations.reduce((n, p) => n + (p.count ?? 0), 0)).to.equal(10);
    const okCounters = activations.find(
      (p) =>
        p.attributes['granary.grain.kind'] === 'counter' &&
        p.attributes['granary.outcome'] === 'ok',
    );
    expect(okCounters?.count).to.equal(5);
    expect(
      valueOf(h, 'granary.grain.deactivations', {
        'granary.grain.kind': 'broken',
        'granary.reason': 'activation-failed',
      }),
    ).to.equal(1);

    // Idle passivation ends the five counters: exactly five idle deactivations.
    await waitUntil(() => host.activationCount('counter') === 0, 'counters passivated', {
      on: [onActivationEvent],
      timeoutMs: 5_000,
    });
    const after = await hostSdk.collect();
    expect(
      valueOf(after, 'granary.grain.activations', { 'granary.grain.kind': 'counter' }),
    ).to.equal(0);
    expect(
      valueOf(after, 'granary.grain.deactivations', {
        'granary.grain.kind': 'counter',
        'granary.reason': 'idle',
      }),
    ).to.equal(5);
    expect(
      valueOf(after, 'granary.grain.mailbox.depth', { 'granary.grain.kind': 'counter' }),
    ).to.equal(0);
    expect(valueOf(after, 'granary.members', { 'granary.member.status': 'up' })).to.equal(2);
  });
});
