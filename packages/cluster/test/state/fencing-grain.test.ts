import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { PersistentGrain } from '../../src/grains/persistent-grain';
import { shardOf } from '../../src/placement/shard-of';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { MemberFencedError } from '../../src/errors';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { waitForClusters } from '../cluster/converge';
import { quiet } from '../grains/memory-nodes';

const KIND = 'fenced';
const SHARDS = 8;
/** Short lease, so the crashed member's claims expire quickly. */
const TTL_MS = 400;

interface Value {
  v: number;
}
interface SetValue {
  set: number;
  /** Hold the write until the test opens the gate (a member frozen between turn and write). */
  hold?: boolean;
}

const codec = jsonStateCodec<Value>();
let store: RedisStateStore;
let gate: Promise<void> = Promise.resolve();
let holding = false;
const outcomes: Array<{ member: string; value: number; error?: unknown }> = [];

/** Sets its value and writes it through, fenced by the epoch of its activation's claim. */
class Register extends PersistentGrain<Value> {
  constructor(private readonly member: string) {
    super({ store, codec, initial: () => ({ v: 0 }) });
  }

  async receive(ctx: GrainContext): Promise<unknown> {
    const { set, hold } = ctx.message as SetValue;
    this.state = { v: set };
    if (hold) {
      holding = true;
      await gate;
    }
    try {
      await this.writeState();
      outcomes.push({ member: this.member, value: set });
    } catch (error) {
      outcomes.push({ member: this.member, value: set, error });
      throw error;
    }
    return set;
  }
}

function waitUntil(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
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

describe('fencing: a member that lost its shard cannot overwrite the new owner (in-process members, real Redis)', function () {
  this.timeout(30_000);
  let redis: RedisHandle;
  const clusters: Cluster[] = [];

  before(async () => {
    redis = await startRedis();
    store = new RedisStateStore({ url: redis.url });
  });
  after(async () => {
    await Promise.all(clusters.map((c) => c.shutdown({ graceful: false })));
    await store.close();
    await redis.stop();
  });

  it("refuses the stale member's pending write (its lease lapsed); the new owner's state stays", async () => {
    const table = new MemoryClusterTable();
    const start = (id: string, provider: MemoryProvider): Promise<Cluster> =>
      Cluster.start({
        name: 'fencing',
        id,
        provider,
        kinds: [kind(KIND, () => new Register(id), { shardCount: SHARDS })],
        remote: { host: '127.0.0.1', port: 0 },
        claimRetryMs: 50,
        requestTimeoutMs: 5000,
        logger: quiet,
      });
    const staleProvider = new MemoryProvider(table, { ttlMs: TTL_MS });
    const stale = await start('stale', staleProvider);
    const owner = await start('owner', new MemoryProvider(table, { ttlMs: TTL_MS }));
    clusters.push(stale, owner);
    await waitForClusters(
      clusters,
      () =>
        Array.from({ length: SHARDS }, (_, s) => s).every(
          (s) => stale.canServe(KIND, s) !== owner.canServe(KIND, s),
        ),
      'every shard held once',
    );
    const id = Array.from({ length: 100 }, (_, i) => `r${i}`).find((r) =>
      stale.canServe(KIND, shardOf(r, SHARDS)),
    )!;
    const shard = shardOf(id, SHARDS);

    expect(await owner.request(KIND, id, { set: 1 })).to.equal(1);
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    // Not awaited: the stale member's reply path is not what this test is about.
    void stale
      .request(KIND, id, { set: 2, hold: true }, { timeoutMs: 5000 })
      .catch(() => undefined);
    await waitUntil(() => holding, 'the stale member holds its write');

    staleProvider.crash();
    await waitForClusters(
      [owner],
      () => owner.canServe(KIND, shard),
      'the owner claims the shard',
      5000,
    );
    expect(await owner.request(KIND, id, { set: 3 })).to.equal(3);

    open();
    await waitUntil(() => outcomes.length === 3, 'the stale member tried its write');
    const staleWrite = outcomes.find((o) => o.member === 'stale' && o.value === 2);
    // Its lease lapsed: the write is refused before it reaches the store (the store's epoch
    // check, the second line, is persistent-state.test's).
    expect(staleWrite?.error).to.be.instanceOf(MemberFencedError);
    const record = await store.read(KIND, id);
    expect(codec.decode(record!.state)).to.deep.equal({ v: 3 });
    expect(
      outcomes.map((o) => `${o.member}:${o.value}:${o.error ? 'rejected' : 'ok'}`),
    ).to.deep.equal(['stale:1:ok', 'owner:3:ok', 'stale:2:rejected']);
  });
});
