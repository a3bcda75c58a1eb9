import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { InconsistentStateError, StateUnavailableError } from '../../src/state/errors';
import { PersistentState } from '../../src/state/persistent-state';
import type { ClusterLogger } from '../../src/internal/logger';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';

/** Short, so the suite stays fast; every "no hang" bound below is a small multiple of it. */
const TIMEOUT_MS = 400;
/** Upper bound for one failing call: the timeout plus generous slack for a loaded 2-core CI box. */
const FAIL_FAST_BOUND_MS = TIMEOUT_MS * 5;

async function settleWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ value?: T; error?: unknown; elapsed: number }> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms`)), ms);
  });
  try {
    const value = await Promise.race([promise, hang]);
    return { value, elapsed: Date.now() - start };
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('did not settle')) throw error;
    return { error, elapsed: Date.now() - start };
  } finally {
    clearTimeout(timer);
  }
}

/** Retries `attempt` until it resolves; bounded so a broken recovery fails the test. */
async function eventually<T>(attempt: () => Promise<T>, boundMs = 10_000): Promise<T> {
  const until = Date.now() + boundMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('RedisStateStore faults', () => {
  let redis: RedisHandle;
  let store: RedisStateStore;
  const cleanups: Array<() => unknown> = [];

  beforeEach(async () => {
    redis = await startRedis();
    store = new RedisStateStore({ url: redis.url, commandTimeoutMs: TIMEOUT_MS });
  });

  afterEach(async () => {
    redis.resume();
    await store.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await redis.stop();
  });

  describe('Redis killed', () => {
    it('fails calls under load fast with StateUnavailableError, then the same store recovers', async () => {
      const WORKERS = 50;
      const phase = { killed: false, restarted: false, stop: false };
      const seen = { unavailable: 0, unexpected: [] as unknown[], maxLatencyMs: 0 };
      const failedWhileDown = new Set<number>();
      const okAfterRestart = new Set<number>();
      let allFailed!: () => void;
      let allRecovered!: () => void;
      const allFailedP = new Promise<void>((r) => (allFailed = r));
      const allRecoveredP = new Promise<void>((r) => (allRecovered = r));

      // Each worker is one grain doing write-through: write, and reload after a conflict.
      const worker = async (w: number): Promise<void> => {
        let version: number | null = null;
        let n = 0;
        while (!phase.stop) {
          const start = Date.now();
          try {
            version = await store.write('load', `g${w}`, Uint8Array.of(++n & 0xff), {
              expectedVersion: version,
              epoch: 1,
            });
            if (phase.restarted && !okAfterRestart.has(w)) {
              okAfterRestart.add(w);
              if (okAfterRestart.size === WORKERS) allRecovered();
            }
          } catch (err) {
            if (err instanceof StateUnavailableError) {
              seen.unavailable++;
              if (phase.killed && !phase.restarted && !failedWhileDown.has(w)) {
                failedWhileDown.add(w);
                if (failedWhileDown.size === WORKERS) allFailed();
              }
              await new Promise((resolve) => setTimeout(resolve, 20));
            } else if (err instanceof InconsistentStateError) {
              version = (await store.read('load', `g${w}`).catch(() => null))?.version ?? null;
            } else {
              seen.unexpected.push(err);
            }
          }
          seen.maxLatencyMs = Math.max(seen.maxLatencyMs, Date.now() - start);
        }
      };
      const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));

      await new Promise((resolve) => setTimeout(resolve, 200));
      phase.killed = true;
      await redis.kill({ keepData: true }); // a crash: the append-only file stays
      await allFailedP;
      await redis.restart();
      phase.restarted = true;
      await allRecoveredP;
      phase.stop = true;
      await Promise.all(workers);

      expect(seen.unexpected).to.deep.equal([]);
      expect(seen.unavailable).to.be.at.least(WORKERS);
      expect(seen.maxLatencyMs).to.be.below(FAIL_FAST_BOUND_MS);
    });

    it('fails read, write and clear fast while Redis is down, naming the grain and the option', async () => {
      const logged: string[] = [];
      const log = (level: string) => (_: unknown, msg?: string) => logged.push(`${level}: ${msg}`);
      const logger: ClusterLogger = {
        debug: log('debug'),
        info: log('info'),
        warn: log('warn'),
        error: log('error'),
        child: () => logger,
      };
      await store.close();
      store = new RedisStateStore({
        url: redis.url,
        commandTimeoutMs: TIMEOUT_MS,
        logger,
      });
      await store.write('k', 'seed', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
      await redis.kill({ keepData: true });
      const calls: Array<() => Promise<unknown>> = [
        () => store.read('k', 'seed'),
        () => store.write('k', 'seed', Uint8Array.of(2), { expectedVersion: 1, epoch: 1 }),
        () => store.clear('k', 'seed', { expectedVersion: 1, epoch: 1 }),
      ];
      for (const call of calls) {
        const { error, elapsed } = await settleWithin(call(), FAIL_FAST_BOUND_MS);
        expect(error).to.be.instanceOf(StateUnavailableError);
        expect((error as StateUnavailableError).code).to.equal('ERR_STATE_UNAVAILABLE');
        expect((error as Error).message)
          .to.contain('k/seed')
          .and.to.contain('commandTimeoutMs');
        expect(elapsed).to.be.below(FAIL_FAST_BOUND_MS);
      }
      await redis.restart();
      // Redis writes its append-only file before each reply (testkit's appendfsync no; the
      // default durability refuses everysec, which may hold writes in memory): nothing lost.
      const record = await eventually(() => store.read('k', 'seed'));
      expect([record?.version, Array.from(record?.state ?? [])]).to.deep.equal([1, [1]]);
      expect(logged).to.deep.equal([
        'warn: state store lost Redis; calls fail with StateUnavailableError until it is back',
        'info: state store reconnected to Redis',
      ]);
    });

    it('bounds calls by commandTimeoutMs on a client passed in, even with its offline queue on', async () => {
      const client = new Redis(redis.url, { retryStrategy: () => 100 });
      client.on('error', () => {});
      cleanups.push(() => client.disconnect());
      const own = new RedisStateStore({ client, commandTimeoutMs: TIMEOUT_MS });
      await own.write('k', 'x', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
      await redis.kill();
      const { error, elapsed } = await settleWithin(own.read('k', 'x'), FAIL_FAST_BOUND_MS);
      expect(error).to.be.instanceOf(StateUnavailableError);
      expect(elapsed).to.be.below(FAIL_FAST_BOUND_MS);
    });
  });

  describe('Redis paused (silent)', () => {
    it('times out a write with an unknown outcome; if it lands later, the old version cannot overwrite it', async () => {
      await store.write('k', 'x', Uint8Array.of(1), { expectedVersion: null, epoch: 1 });
      redis.pause();
      const { error } = await settleWithin(
        store.write('k', 'x', Uint8Array.of(2), { expectedVersion: 1, epoch: 1 }),
        FAIL_FAST_BOUND_MS,
      );
      expect(error).to.be.instanceOf(StateUnavailableError);
      expect((error as Error).message).to.contain('outcome is unknown');
      redis.resume();
      // The write was already in the socket: Redis applies it once it runs again.
      const landed = await eventually(async () => {
        const record = await store.read('k', 'x');
        if (record?.version !== 2) throw new Error(`version ${record?.version}`);
        return record;
      });
      expect(Array.from(landed.state)).to.deep.equal([2]);
      const err = await store
        .write('k', 'x', Uint8Array.of(9), { expectedVersion: 1, epoch: 1 })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InconsistentStateError);
      expect(Array.from((await store.read('k', 'x'))!.state)).to.deep.equal([2]);
    });
  });

  describe('PersistentState.load', () => {
    const codec = jsonStateCodec<{ n: number }>();
    const make = (): PersistentState<{ n: number }> =>
      new PersistentState({
        store,
        kind: 'k',
        id: 'x',
        codec,
        epoch: () => 1,
        initial: () => ({ n: 0 }),
      });

    it('retries while Redis does not answer and loads the stored state once it does', async () => {
      await store.write('k', 'x', codec.encode({ n: 41 }), { expectedVersion: null, epoch: 1 });
      redis.pause();
      const ps = make();
      let failedAttempts = 0;
      const read = store.read.bind(store);
      store.read = async (kind, id) => {
        try {
          return await read(kind, id);
        } catch (err) {
          failedAttempts++;
          if (failedAttempts === 2) redis.resume();
          throw err;
        }
      };
      await ps.load(Date.now() + 10_000);
      expect(failedAttempts).to.be.at.least(2);
      expect({ state: ps.state, version: ps.version }).to.deep.equal({
        state: { n: 41 },
        version: 1,
      });
    });

    it('gives up at the deadline with StateUnavailableError while Redis is down', async () => {
      await redis.kill();
      const ps = make();
      const deadlineMs = 1000;
      const { error, elapsed } = await settleWithin(
        ps.load(Date.now() + deadlineMs),
        deadlineMs + FAIL_FAST_BOUND_MS,
      );
      expect(error).to.be.instanceOf(StateUnavailableError);
      expect(elapsed).to.be.within(deadlineMs - 50, deadlineMs + TIMEOUT_MS);
      expect(ps.loaded).to.equal(false);
    });
  });
});
