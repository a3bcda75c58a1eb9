import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'chai';
import { errorsOnlyLogger } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import { pointsOf, startTestSdk, valueOf, type TestSdk } from './fixtures/test-sdk';

/** docs/metrics.md, from the compiled test (packages/cluster/dist/test/telemetry). */
const CATALOG = resolve(__dirname, '../../../../../docs/metrics.md');

/**
 * The observable instruments of the catalog: a counter or gauge a dashboard or an alert reads
 * from the member's start. Left out: histograms (the SDK exports one from its first recorded
 * value), the pool's (made with the first PoolClient) and the event-loop gauges (from the first
 * 20 ms sample).
 */
function observableNames(): string[] {
  const rows = readFileSync(CATALOG, 'utf8').matchAll(/^\| `(granary\.[a-z_.]+)` +\| (\w+)/gm);
  return [...rows]
    .filter(([, , instrument]) => instrument!.startsWith('Observable'))
    .map(([, name]) => name!)
    .filter((name) => !name.startsWith('granary.pool.') && !name.startsWith('granary.event_loop.'));
}

describe('Cluster metrics before any event', function () {
  this.timeout(20_000);
  let sdk: TestSdk;
  let cluster: Cluster;
  const store = new MemoryStateStore();

  before(async () => {
    sdk = startTestSdk(false);
    cluster = await Cluster.start({
      name: 'from-start',
      id: 'm',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 1000 }),
      kinds: [
        kind('device', () => ({ receive: () => 'ok' }), {
          shardCount: 2,
          state: { store, initial: () => ({ n: 0 }) },
        }),
        kind('plain', () => ({ receive: () => 'ok' }), { shardCount: 2 }),
      ],
      stateStores: [store],
      reminders: { store: new MemoryReminderStore() },
      remote: { host: '127.0.0.1', port: 0 },
      logger: errorsOnlyLogger,
      telemetry: { meterProvider: sdk.meterProvider },
    });
  });

  after(async () => {
    await cluster.shutdown();
    await sdk.shutdown();
  });

  it('reports every documented counter and gauge at once', async () => {
    const rm = await sdk.collect();
    const missing = observableNames().filter((name) => pointsOf(rm, name).length === 0);
    expect(missing).to.deep.equal([]);
  });

  it('reports each reason and outcome of a hosted kind at 0 before the first', async () => {
    const rm = await sdk.collect();
    const k = 'granary.grain.kind';
    expect(
      valueOf(rm, 'granary.grain.calls', { [k]: 'plain', 'granary.call.outcome': 'error' }),
    ).to.equal(0);
    expect(
      valueOf(rm, 'granary.grain.deactivations', { [k]: 'device', 'granary.reason': 'idle' }),
    ).to.equal(0);
    expect(
      valueOf(rm, 'granary.grain.deactivations', {
        [k]: 'plain',
        'granary.reason': 'state-conflict',
      }),
    ).to.equal(0);
    expect(
      valueOf(rm, 'granary.shard.releases', { [k]: 'device', 'granary.reason': 'lease-lost' }),
    ).to.equal(0);
    expect(valueOf(rm, 'granary.dead_letters', { 'granary.reason': 'not-found' })).to.equal(0);
    expect(
      valueOf(rm, 'granary.state.operations', {
        [k]: 'device',
        'granary.state.operation': 'write',
        'granary.outcome': 'conflict',
      }),
    ).to.equal(0);
    // A kind that declares no state has no state series until it runs an operation.
    expect(
      pointsOf(rm, 'granary.state.operations').filter((p) => p.attributes[k] === 'plain'),
    ).to.deep.equal([]);
  });

  it('keeps the zeros of the other outcomes once one is counted', async () => {
    await cluster.request('device', 'd-1', 'ping', { timeoutMs: 2000 });
    const rm = await sdk.collect();
    const k = 'granary.grain.kind';
    expect(
      valueOf(rm, 'granary.grain.calls', { [k]: 'device', 'granary.call.outcome': 'ok' }),
    ).to.equal(1);
    expect(
      valueOf(rm, 'granary.grain.calls', { [k]: 'device', 'granary.call.outcome': 'app_error' }),
    ).to.equal(0);
    expect(
      valueOf(rm, 'granary.state.operations', {
        [k]: 'device',
        'granary.state.operation': 'read',
        'granary.outcome': 'ok',
      }),
    ).to.equal(1);
  });
});
