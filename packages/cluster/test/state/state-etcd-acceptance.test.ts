import { join } from 'node:path';
import { startRedis, TestCluster, type RedisHandle, type TestClusterNode } from '@granary/testkit';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import { CallOutcomeUnknownError } from '../../src/errors';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { quiet } from '../grains/memory-nodes';
import type { SetValue } from './fixtures/state-node';

/** Lease TTL of the nodes (3 s, as the other etcd acceptance tests use on this 2-core box). */
const TTL_S = 3;
const SHARDS = 16;
const CLUSTER = 'state-acc';
const INCREMENTS = 1000;
/** Concurrent callers of the counter test (each issues increments one after the other). */
const CALLERS = 100;
const CALL_TIMEOUT_MS = 20_000;

const codec = jsonStateCodec<{ n: number }>();

/** The node whose latest activation log line activated `kind/identity`. */
function hostOf(tc: TestCluster, kind: string, identity: string): TestClusterNode | undefined {
  let latest: { at: number; member: string } | undefined;
  for (const node of tc.live) {
    for (const { data } of node.process?.lines ?? []) {
      if (data.type !== 'act' || data.kind !== kind || data.identity !== identity) continue;
      if (data.event === 'activate' && (!latest || (data.at as number) >= latest.at)) {
        latest = { at: data.at as number, member: data.member as string };
      }
    }
  }
  return tc.live.find((n) => n.id === latest?.member);
}

/** True once `node` has reported a successful counter write. */
function wrote(node: TestClusterNode): boolean {
  return (node.process?.lines ?? []).some(
    (l) => l.data.type === 'write' && l.data.kind === 'counter' && l.data.ok === true,
  );
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('grain state on etcd + Redis, nodes as processes (acceptance)', function () {
  this.timeout(120_000);
  let redis: RedisHandle;
  let store: RedisStateStore;
  let tc: TestCluster | undefined;
  let client: Cluster | undefined;

  before(async () => {
    redis = await startRedis();
    store = new RedisStateStore({ url: redis.url });
  });
  after(async () => {
    await store.close();
    await redis.stop();
  });
  afterEach(async () => {
    await client?.shutdown({ graceful: false });
    await tc?.stop();
    client = undefined;
    tc = undefined;
  });

  async function startCluster(size: number): Promise<{ tc: TestCluster; client: Cluster }> {
    tc = await TestCluster.start({
      size,
      etcd: true,
      script: join(__dirname, 'fixtures/state-node.js'),
      config: (ctx) => ({
        etcdEndpoints: ctx.etcdEndpoints,
        redisUrl: redis.url,
        id: ctx.id,
        cluster: CLUSTER,
        ttlSeconds: TTL_S,
        shardCount: SHARDS,
      }),
    });
    client = await Cluster.start({
      name: CLUSTER,
      id: 'client',
      provider: new EtcdProvider({
        endpoints: tc.etcd!.endpoints,
        ttlSeconds: TTL_S,
        prefix: '/granary-state',
        logger: quiet,
      }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0 },
      logger: quiet,
    });
    await tc.waitForConvergence();
    return { tc, client };
  }

  it('counter: 1,000 increments from 100 concurrent callers across 3 nodes, owner SIGKILLed, next owner leaves gracefully: acknowledged <= final <= attempted', async () => {
    const { tc, client } = await startCluster(3);
    await client.request('counter', 'total', 'inc', { timeoutMs: CALL_TIMEOUT_MS });
    let acknowledged = 1;
    let settled = 1;
    const failures: string[] = [];
    const unexpected: string[] = [];
    let issued = 1;
    // CALLERS callers share the increments: a call in flight to the owner when it is SIGKILLed
    // ends with an unknown outcome (never retried), so the rest must still be to come.
    const calls = Array.from({ length: CALLERS }, async () => {
      while (issued < INCREMENTS) {
        issued++;
        try {
          await client.request('counter', 'total', 'inc', { timeoutMs: CALL_TIMEOUT_MS });
          acknowledged++;
        } catch (err) {
          const e = err as Error;
          failures.push(`${e.name}: ${e.message}`);
          // Only calls in flight to the killed owner may end unknown; the graceful leave fails none.
          if (!(err instanceof CallOutcomeUnknownError)) unexpected.push(`${e.name}: ${e.message}`);
        }
        settled++;
      }
    });

    await until(() => settled >= 150, '150 increments answered');
    const killed = hostOf(tc, 'counter', 'total')!;
    await tc.kill(killed);
    // The next owner leaves as soon as it has stored its first increment: mid-load.
    await until(() => {
      const host = hostOf(tc, 'counter', 'total');
      return host !== undefined && host !== killed && wrote(host);
    }, 'the counter is stored by a survivor');
    const next = hostOf(tc, 'counter', 'total')!;
    const settledAtLeave = settled;
    await tc.stopNode(next);
    await Promise.all(calls);

    const record = await store.read('counter', 'total');
    const final = record ? codec.decode(record.state).n : 0;
    expect(settledAtLeave, 'the leave happened under load').to.be.below(INCREMENTS);
    expect(settled).to.equal(INCREMENTS);
    const numbers = `acknowledged ${acknowledged}, final ${final}, attempted ${INCREMENTS}, unknown outcome ${failures.length}`;
    console.log(`      counter: ${numbers}`);
    expect(unexpected, numbers).to.deep.equal([]);
    expect(acknowledged, `${numbers}; failures: ${failures.slice(0, 3).join(' | ')}`).to.be.at.most(
      final,
    );
    expect(final, numbers).to.be.at.most(INCREMENTS);
  });

  it('calls in flight when their owner is SIGKILLed: CallOutcomeUnknownError naming the grain, unless idempotent: true (then retried on the next owner)', async () => {
    const { tc, client } = await startCluster(2);
    // Two registers hosted by one node (the victim): each holds its write, so its call is in
    // flight at the kill.
    const ids = Array.from({ length: 16 }, (_, i) => `r${i}`);
    for (const id of ids) await client.request('register', id, { set: 0 } satisfies SetValue);
    const victim = tc.nodes.find(
      (n) => ids.filter((id) => hostOf(tc, 'register', id) === n).length >= 2,
    )!;
    const [plain, idempotent] = ids.filter((id) => hostOf(tc, 'register', id) === victim) as [
      string,
      string,
    ];
    const holding = (id: string): boolean =>
      (victim.process?.lines ?? []).some(
        (l) => l.data.type === 'holding' && l.data.identity === id,
      );
    const plainCall = client
      .request('register', plain, { set: 1, delayMs: 60_000 }, { timeoutMs: CALL_TIMEOUT_MS })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    const idempotentCall = client.request<number>(
      'register',
      idempotent,
      { set: 2, delayMs: 1500 } satisfies SetValue,
      { timeoutMs: CALL_TIMEOUT_MS, idempotent: true },
    );
    await until(() => holding(plain) && holding(idempotent), 'both calls reached grain code');
    await tc.kill(victim);

    const err = await plainCall;
    expect(err).to.be.instanceOf(CallOutcomeUnknownError);
    const unknown = err as CallOutcomeUnknownError;
    expect(unknown.code).to.equal('ERR_CALL_OUTCOME_UNKNOWN');
    expect([unknown.kind, unknown.identity]).to.deep.equal(['register', plain]);
    expect(unknown.message).to.contain(`register/${plain}`).and.contain('idempotent');
    expect(await idempotentCall).to.equal(2);
    const storedBySurvivor = tc.live.some((n) =>
      (n.process?.lines ?? []).some(
        (l) => l.data.type === 'write' && l.data.identity === idempotent && l.data.value === 2,
      ),
    );
    expect(storedBySurvivor, 'the retried call was applied by a survivor').to.equal(true);
  });

  it('Redis killed and restarted under load: typed errors while down, full recovery after, no node crashes', async () => {
    const { tc, client } = await startCluster(2);
    const phase = { down: false, stop: false };
    let okAfterRestart = 0;
    const codesWhileDown = new Set<string>();
    const untyped: unknown[] = [];
    const loops = Array.from({ length: 50 }, async (_, i) => {
      while (!phase.stop) {
        try {
          await client.request('counter', `k${i}`, 'inc', { timeoutMs: 3000 });
          if (!phase.down) okAfterRestart++;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (!(err instanceof Error) || typeof code !== 'string') untyped.push(err);
          else if (phase.down) codesWhileDown.add(`${err.name}:${code}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    });
    await until(() => okAfterRestart >= 100, 'counters work');
    phase.down = true;
    await redis.kill();
    await until(() => codesWhileDown.size > 0, 'calls fail while Redis is down');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.restart();
    okAfterRestart = 0;
    phase.down = false;
    await until(() => okAfterRestart >= 200, 'counters recover');
    phase.stop = true;
    await Promise.all(loops);

    expect(untyped).to.deep.equal([]);
    expect([...codesWhileDown]).to.include('GrainError:ERR_STATE_UNAVAILABLE');
    for (const node of tc.nodes) expect(node.process!.hasExited, node.id).to.equal(false);
  });

  it('fencing: a node SIGSTOPped past its TTL wakes up and its pending write is rejected by epoch, never overwriting', async () => {
    const { tc, client } = await startCluster(3);
    const set = (message: SetValue): Promise<unknown> =>
      client.request('register', 'r', message, { timeoutMs: CALL_TIMEOUT_MS });
    expect(await set({ set: 1 })).to.equal(1);
    const stale = hostOf(tc, 'register', 'r')!;

    // The stale node takes the call, then freezes before its write.
    void set({ set: 2, delayMs: 300 }).catch(() => undefined);
    await stale.process!.waitFor((l) => l.type === 'holding' && l.value === 2);
    tc.pause(stale);
    try {
      // Its lease expires and the others drop it; the grain activates elsewhere and writes
      // (with a newer epoch).
      await until(
        () => !client.topology.members.some((m) => m.id === stale.id),
        'the frozen node leaves the topology',
      );
      expect(await set({ set: 3 })).to.equal(3);
      const owner = hostOf(tc, 'register', 'r')!;
      expect(owner.id).to.not.equal(stale.id);
    } finally {
      tc.resume(stale);
    }
    const rejected = await stale.process!.waitFor(
      (l) => l.type === 'write' && l.value === 2,
      15_000,
    );
    expect({ ok: rejected.data.ok, reason: rejected.data.reason }).to.deep.equal({
      ok: false,
      reason: 'epoch',
    });
    const record = await store.read('register', 'r');
    expect(codec.decode(record!.state)).to.deep.equal({ n: 3 });
  });
});
