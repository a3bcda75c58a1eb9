import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import type { GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { PersistentGrain } from '../../src/grains/persistent-grain';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { MemoryNodes } from '../grains/memory-nodes';

/** Short idle timeout so passivation happens within the test; long enough not to race calls. */
const IDLE_MS = 300;
const GRAINS = 24;

interface Count {
  n: number;
}
const codec = jsonStateCodec<Count>();
let store: RedisStateStore;

/**
 * A counter that keeps its count in memory and persists only on deactivation
 * (`persistOnDeactivate`: passivated when idle, drained on leave).
 */
class Counter extends PersistentGrain<Count> {
  constructor() {
    super({ store, codec, initial: () => ({ n: 0 }), persistOnDeactivate: true });
  }

  receive(ctx: GrainContext): unknown {
    if (ctx.message === 'inc') this.state = { n: this.state.n + 1 };
    return this.state.n;
  }
}

function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() - t0 > timeoutMs) return reject(new Error(`timed out: ${what}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}

describe('persistent grain: PersistentState in a grain over RedisStateStore (in-process members, real Redis)', function () {
  this.timeout(30_000);
  let redis: RedisHandle;
  let nodes: MemoryNodes;
  const ids = Array.from({ length: GRAINS }, (_, i) => `c${i}`);

  let test = 0;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.stop();
  });
  beforeEach(() => {
    // A prefix per test: each starts with no stored counters.
    store = new RedisStateStore({ url: redis.url, keyPrefix: `t${++test}:` });
    nodes = new MemoryNodes(() => [
      kind('counter', () => new Counter(), { idleTimeoutMs: IDLE_MS, shardCount: 8 }),
    ]);
  });
  afterEach(async () => {
    await nodes.stopAll();
    await store.close();
  });

  /** Increments grain i (i + 1) times through `via`. */
  async function increment(via: number): Promise<void> {
    await Promise.all(
      ids.map(async (id, i) => {
        for (let k = 0; k <= i; k++) await nodes.nodes[via]!.request('counter', id, 'inc');
      }),
    );
  }

  async function stored(id: string): Promise<number | undefined> {
    const record = await store.read('counter', id);
    return record ? codec.decode(record.state).n : undefined;
  }

  it('passivation round trip: state saved on passivation, reactivated on another member after a join, intact', async () => {
    await nodes.add('p1');
    await increment(0);
    await waitUntil(
      () =>
        nodes.log.filter((e) => e.type === 'deactivate' && e.reason === 'idle').length === GRAINS,
      'every counter passivates',
    );
    expect(await Promise.all(ids.map(stored))).to.deep.equal(ids.map((_, i) => i + 1));

    await nodes.add('p2');
    const counts = await Promise.all(
      ids.map((id) => nodes.nodes[0]!.request('counter', id, 'get')),
    );
    expect(counts).to.deep.equal(ids.map((_, i) => i + 1));
    const movedToP2 = nodes.log.filter((e) => e.type === 'activate' && e.member === 'p2');
    expect(movedToP2.length, 'some counters now live on p2').to.be.greaterThan(0);
  });

  it('drain on graceful leave saves the state; the survivor reactivates it intact', async () => {
    await nodes.add('p1');
    await nodes.add('p2');
    await increment(1);
    const onP1 = new Set(
      nodes.log.filter((e) => e.type === 'activate' && e.member === 'p1').map((e) => e.identity),
    );
    expect(onP1.size, 'some counters live on p1').to.be.greaterThan(0);
    await nodes.nodes[0]!.shutdown({ graceful: true });
    const counts = await Promise.all(
      ids.map((id) => nodes.nodes[1]!.request('counter', id, 'get')),
    );
    expect(counts).to.deep.equal(ids.map((_, i) => i + 1));
  });
});
