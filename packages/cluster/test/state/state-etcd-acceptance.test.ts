import { join } from 'node:path';
import { startRedis, TestCluster, type RedisHandle, type TestClusterNode } from '@granary/testkit';
import { expect } from 'chai';
import type { Cluster } from '../../src/cluster';
import { CallOutcomeUnknownError } from '../../src/errors';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import type { SetValue } from './fixtures/state-node';
import { startEtcdClient } from '../fixtures/etcd-client';

/** Lease TTL of the nodes (3 s, as the other etcd acceptance tests use on this 2-core box). */
const TTL_S = 3;
const SHARDS = 16;
const CLUSTER = 'state-acc';
/** Increments per wave of the counter test, all issued at once (the 1,000 concurrent). */
const INCREMENTS = 1000;
/** Wave 1's owner is SIGKILLed once this many of its increments are stored: the rest in flight. */
const KILL_AFTER = 150;
/** Wave 2's owner leaves once this many of its increments are stored. */
const LEAVE_AFTER = 150;
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
    client = await startEtcdClient({
      name: CLUSTER,
      endpoints: tc.etcd!.endpoints,
      ttlSeconds: TTL_S,
      prefix: '/granary-state',
    });
    await tc.waitForConvergence();
    return { tc, client };
  }

  it('counter: 1,000 concurrent increments across 3 nodes while the owner is SIGKILLed, 1,000 during the failover, 1,000 more while the next owner leaves gracefully: acknowledged <= final <= attempted', async () => {
    const { tc, client } = await startCluster(3);
    const tally = { attempted: 0, acknowledged: 0 };
    const inc = async (): Promise<void> => {
      tally.attempted++;
      await client.request('counter', 'total', 'inc', { timeoutMs: CALL_TIMEOUT_MS });
      tally.acknowledged++;
    };
    /** INCREMENTS calls issued at once (all in flight together); resolves with their failures. */
    const wave = (): { acked: () => number; settled: Promise<Error[]> } => {
      let acked = 0;
      const calls = Array.from({ length: INCREMENTS }, () =>
        inc().then(
          () => void acked++,
          (err: unknown) => err as Error,
        ),
      );
      return {
        acked: () => acked,
        settled: Promise.all(calls).then((r) => r.filter((e): e is Error => e !== undefined)),
      };
    };
    await inc(); // activates the counter: its host is known
    const first = hostOf(tc, 'counter', 'total')!;

    // Wave 1: the owner is SIGKILLed with most of the wave queued at it. Those calls were sent
    // to a member that died before answering: their outcome is unknown (CallOutcomeUnknownError,
    // never retried, so nothing is applied twice).
    const w1 = wave();
    await until(() => w1.acked() >= KILL_AFTER, `${KILL_AFTER} increments of wave 1 stored`);
    await tc.kill(first);
    const ackedAtKill = w1.acked();
    const failed1 = await w1.settled;

    // Wave 2, issued while the dead owner still holds its lease: nothing reaches a member, so
    // every call waits and retries until a survivor owns the counter, and none fails.
    const duringFailover = client.topology.members.some((m) => m.id === first.id);
    const w2 = wave();
    const failed2 = await w2.settled;

    // Wave 3: the next owner leaves gracefully with most of this wave queued at it. A graceful
    // leave fails no call: queued calls finish or move to the last member.
    const next = hostOf(tc, 'counter', 'total')!;
    expect(next.id).to.not.equal(first.id);
    const w3 = wave();
    await until(() => w3.acked() >= LEAVE_AFTER, `${LEAVE_AFTER} increments of wave 3 stored`);
    const leaving = tc.stopNode(next);
    const ackedAtLeave = w3.acked();
    const failed3 = await w3.settled;
    await leaving;

    const record = await store.read('counter', 'total');
    const final = record ? codec.decode(record.state).n : 0;
    const { attempted, acknowledged } = tally;
    const numbers =
      `acknowledged ${acknowledged}, final ${final}, attempted ${attempted}; ` +
      `wave 1: ${ackedAtKill} stored before the kill, ${failed1.length} unknown; ` +
      `wave 2 (failover): ${failed2.length} failed; ` +
      `wave 3: ${ackedAtLeave} stored before the leave, ${failed3.length} failed`;
    console.log(`      counter: ${numbers}`);
    expect(attempted).to.equal(3 * INCREMENTS + 1);
    expect(ackedAtKill, 'wave 1 was in flight at the kill').to.be.below(INCREMENTS);
    expect(duringFailover, 'wave 2 was issued before the dead owner left the topology').to.equal(
      true,
    );
    expect(ackedAtLeave, 'wave 3 was in flight at the leave').to.be.below(INCREMENTS);
    const unexpected1 = failed1.filter((e) => !(e instanceof CallOutcomeUnknownError));
    expect(unexpected1.map((e) => `${e.name}: ${e.message}`).slice(0, 3), numbers).to.deep.equal(
      [],
    );
    for (const failed of [failed2, failed3]) {
      expect(failed.map((e) => `${e.name}: ${e.message}`).slice(0, 3), numbers).to.deep.equal([]);
    }
    expect(acknowledged, numbers).to.be.at.most(final);
    expect(final, numbers).to.be.at.most(attempted);
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
          else if (phase.down) {
            // A GrainError's code is ERR_GRAIN; what the grain threw is its originalCode.
            const thrown = (err as { originalCode?: unknown }).originalCode;
            codesWhileDown.add(`${err.name}:${typeof thrown === 'string' ? thrown : code}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    });
    await until(() => okAfterRestart >= 100, 'counters work');
    phase.down = true;
    await redis.kill({ keepData: true }); // a crash: the append-only file stays
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

  it('fencing: a node SIGSTOPped past its TTL wakes up and its pending write is refused (fenced, or by epoch), never overwriting', async () => {
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
    // Refused by the member's own fence (its lease is not provably alive after the pause) or,
    // had it reached the store, by the newer epoch there.
    expect(rejected.data.ok).to.equal(false);
    expect(rejected.data.reason).to.be.oneOf(['MemberFencedError', 'epoch']);
    const record = await store.read('register', 'r');
    expect(codec.decode(record!.state)).to.deep.equal({ n: 3 });
  });
});
