import { startRedis, type RedisHandle } from '@granary/testkit';
import { expect } from 'chai';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { RedisStateStore } from '../../src/state/redis/redis-state-store';
import { WriteThroughCounter } from './write-through-counter';
import { MemoryNodes } from '../grains/memory-nodes';

const COUNTERS = 30;
const ECHOES = 10;
/** Short, so calls during the outage fail quickly. */
const STATE_TIMEOUT_MS = 300;
const CALL_TIMEOUT_MS = 2000;

let store: RedisStateStore;

class Echo implements Grain {
  receive(ctx: GrainContext): unknown {
    return ctx.message;
  }
}

describe('Redis outage under grain load (in-process members, real Redis)', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  let nodes: MemoryNodes;

  before(async () => {
    redis = await startRedis();
    store = new RedisStateStore({ url: redis.url, commandTimeoutMs: STATE_TIMEOUT_MS });
    nodes = new MemoryNodes(
      () => [
        kind('counter', () => new WriteThroughCounter(store), { shardCount: 8 }),
        kind('echo', () => new Echo(), { shardCount: 8 }),
      ],
      { requestTimeoutMs: CALL_TIMEOUT_MS },
    );
    await nodes.add('o1');
    await nodes.add('o2');
  });
  after(async () => {
    await nodes.stopAll();
    await store.close();
    await redis.stop();
  });

  it('fails state calls with typed errors while Redis is down, keeps other kinds working, recovers after', async () => {
    const phase = { down: false, stop: false };
    const seen = {
      counterOk: 0,
      counterFailedWhileDown: [] as string[],
      untyped: [] as unknown[],
      echoFailed: [] as unknown[],
      echoOk: 0,
    };
    const counterLoop = async (i: number): Promise<void> => {
      while (!phase.stop) {
        const via = nodes.nodes[i % 2]!;
        try {
          await via.request('counter', `c${i % COUNTERS}`, 'inc', { timeoutMs: CALL_TIMEOUT_MS });
          seen.counterOk++;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (!(err instanceof Error) || typeof code !== 'string') seen.untyped.push(err);
          else if (phase.down) {
            // A GrainError's code is ERR_GRAIN; what the grain threw is its originalCode.
            const thrown = (err as { originalCode?: unknown }).originalCode;
            seen.counterFailedWhileDown.push(
              `${err.name}:${typeof thrown === 'string' ? thrown : code}`,
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const echoLoop = async (i: number): Promise<void> => {
      while (!phase.stop) {
        try {
          await nodes.nodes[i % 2]!.request('echo', `e${i % ECHOES}`, i, {
            timeoutMs: CALL_TIMEOUT_MS,
          });
          seen.echoOk++;
        } catch (err) {
          seen.echoFailed.push(err);
        }
      }
    };
    const loops = [
      ...Array.from({ length: COUNTERS }, (_, i) => counterLoop(i)),
      ...Array.from({ length: ECHOES }, (_, i) => echoLoop(i)),
    ];
    const waitFor = async (check: () => boolean, what: string): Promise<void> => {
      const until = Date.now() + 15_000;
      while (!check()) {
        if (Date.now() > until) throw new Error(`timed out: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    await waitFor(() => seen.counterOk >= COUNTERS, 'counters work');
    phase.down = true;
    await redis.kill({ keepData: true }); // a crash: the append-only file stays
    await waitFor(() => seen.counterFailedWhileDown.length >= COUNTERS, 'counter calls fail');
    const echoesDuringOutage = seen.echoOk;
    await waitFor(() => seen.echoOk > echoesDuringOutage + 100, 'echo keeps answering');
    await redis.restart();
    phase.down = false;
    const okAfter = seen.counterOk;
    await waitFor(() => seen.counterOk >= okAfter + COUNTERS * 3, 'counters recover');
    phase.stop = true;
    await Promise.all(loops);

    expect(seen.untyped).to.deep.equal([]);
    expect(seen.echoFailed).to.deep.equal([]);
    expect(new Set(seen.counterFailedWhileDown)).to.include('GrainError:ERR_STATE_UNAVAILABLE');
    for (let i = 0; i < COUNTERS; i++) {
      const n = await nodes.nodes[0]!.request('counter', `c${i}`, 'inc', {
        timeoutMs: CALL_TIMEOUT_MS,
      });
      expect(n, `c${i} answers after recovery`).to.be.a('number');
    }
  });
});
