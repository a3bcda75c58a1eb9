import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expect } from 'chai';
import { NotInfluenceReceiveTimeout } from '@granary/core';
import { startEtcd, type EtcdHandle } from '@granary/testkit';
import type { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import type { ClusterProvider } from '../../src/providers/cluster-provider';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import { overlaps } from './activation-overlaps';
import { MemoryNodes, quiet } from './memory-nodes';

/** Resolution of the shared timer wheel (ActorSystem default tickMs). */
const TICK_MS = 10;
const IDLE_MS = 200;
/** Idle timeout of the kind the 10,000 messages race: bursts pause for about this long. */
const FAST_IDLE_MS = 30;
/**
 * Slack on top of the wheel's one-tick resolution for the few event-loop turns from the tick to
 * the end of onDeactivate, besides the event-loop lateness the test measures (on a loaded
 * 2-core machine this process waits for the CPU for tens of ms at a time).
 */
const SCHEDULING_SLACK_MS = 20;
/** Interval of the timer that measures event-loop lateness. */
const STALL_PROBE_MS = 5;

const received = new Map<string, number>();
/** Date.now() when each identity last received a message (its last activity). */
const lastReceived = new Map<string, number>();

class Sink implements Grain {
  receive(ctx: GrainContext): unknown {
    received.set(ctx.identity, (received.get(ctx.identity) ?? 0) + 1);
    lastReceived.set(ctx.identity, Date.now());
    return (ctx.message as { reply?: boolean }).reply ? ctx.activationId : undefined;
  }
}

/**
 * Idle-neutral messages: the symbol marker of @granary/core, which stays in this process, or a
 * plain field the kind's idleNeutral predicate looks at, which survives the wire (JSON).
 */
const LOCAL_PING = { reply: true, [NotInfluenceReceiveTimeout]: true };
const WIRE_PING = { reply: true, idleNeutral: true };
function idleNeutral(m: unknown): boolean {
  const o = m as { idleNeutral?: boolean; [NotInfluenceReceiveTimeout]?: boolean };
  return o[NotInfluenceReceiveTimeout] === true || o.idleNeutral === true;
}

/**
 * Measures how late the event loop ran in total while `body` runs (ms): the histogram records
 * each interval of a STALL_PROBE_MS timer, so the lateness is what they add up to beyond it.
 */
async function withStalls<T>(body: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  const h = monitorEventLoopDelay({ resolution: STALL_PROBE_MS });
  h.enable();
  try {
    const result = await body();
    const lateNs = h.count * (h.mean - STALL_PROBE_MS * 1e6);
    return { result, stallMs: Math.max(0, Math.round(lateNs / 1e6)) };
  } finally {
    h.disable();
  }
}

function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() - t0 > timeoutMs) return reject(new Error(`timed out: ${what}`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

interface Setup {
  /** Provider per member; undefined: the in-process MemoryProvider. */
  provider?: () => ClusterProvider;
  /** Calls come from a second member without kinds (over the network) instead of the host. */
  remoteCaller: boolean;
}

/**
 * The passivation tests on one provider: one member hosts the kinds; calls come from it (fast
 * unit tests on the MemoryProvider) or from a second member over the remote (real etcd).
 */
function passivationSuite(name: string, setup: () => Promise<Setup>, teardown: () => unknown) {
  describe(`passivation (${name})`, function () {
    this.timeout(30_000);
    let nodes: MemoryNodes;
    let caller: Cluster;
    const host = (): Cluster => nodes.nodes[0]!;
    const id = (s: string): string => `${name}-${s}`;

    before(async () => {
      const s = await setup();
      nodes = new MemoryNodes(
        () => [
          kind('sink', () => new Sink(), { idleTimeoutMs: IDLE_MS, shardCount: 16, idleNeutral }),
          kind('fast', () => new Sink(), { idleTimeoutMs: FAST_IDLE_MS, shardCount: 16 }),
        ],
        { provider: s.provider },
      );
      await nodes.add('p1');
      caller = s.remoteCaller ? await nodes.add('caller', []) : host();
    });
    after(async () => {
      await nodes.stopAll();
      await teardown();
    });

    it('deactivates an idle grain after its timeout, within one timer tick', async () => {
      const g = id('idle-1');
      const { stallMs } = await withStalls(async () => {
        await caller.request('sink', g, { reply: true });
        await waitUntil(
          () => nodes.log.some((e) => e.identity === g && e.type === 'deactivate'),
          `${g} deactivates`,
        );
      });
      const ev = nodes.log.find((e) => e.identity === g && e.type === 'deactivate')!;
      const idleFor = ev.at - lastReceived.get(g)!;
      expect(ev.reason).to.equal('idle');
      expect(ev.member).to.equal('p1');
      expect(idleFor, 'idle time before deactivation').to.be.at.least(IDLE_MS - 2);
      expect(idleFor, `idle time (event loop late ${stallMs} ms in total)`).to.be.at.most(
        IDLE_MS + TICK_MS + SCHEDULING_SLACK_MS + stallMs,
      );
      expect(host().activationCount('sink')).to.equal(0);
    });

    it('messages marked as not influencing idle time (idleNeutral) do not keep a grain active', async () => {
      const g = id('idle-2');
      await caller.request('sink', g, { reply: true });
      const lastActivity = lastReceived.get(g)!;
      const ping = caller === host() ? LOCAL_PING : WIRE_PING;
      let deactivated = false;
      const { stallMs } = await withStalls(async () => {
        while (!deactivated && Date.now() - lastActivity < IDLE_MS * 3) {
          await caller.request('sink', g, ping);
          await new Promise((r) => setTimeout(r, 20));
          deactivated = nodes.log.some((e) => e.identity === g && e.type === 'deactivate');
        }
      });
      expect(deactivated, 'deactivated although pinged').to.equal(true);
      const ev = nodes.log.find((e) => e.identity === g && e.type === 'deactivate')!;
      expect(ev.at - lastActivity, `event loop late ${stallMs} ms in total`).to.be.at.most(
        IDLE_MS + TICK_MS + SCHEDULING_SLACK_MS + stallMs,
      );
    });

    it('10,000 messages sent around the idle boundary: none lost, activations never overlap', async () => {
      const ids = Array.from({ length: 10 }, (_, i) => id(`edge-${i}`));
      for (const g of ids) received.set(g, 0);
      const before = nodes.log.filter((e) => e.kind === 'fast' && e.type === 'deactivate').length;
      let sent = 0;
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 500; i++) caller.send('fast', ids[i % ids.length]!, { n: sent++ });
        // pause near the idle timeout so deactivations race with the next burst
        await new Promise((r) => setTimeout(r, FAST_IDLE_MS - 5 + (round % 4) * 5));
      }
      expect(sent).to.equal(10_000);
      await waitUntil(
        () => ids.reduce((s, g) => s + received.get(g)!, 0) === 10_000,
        'all 10,000 delivered',
      );
      const deactivations = nodes.log.filter((e) => e.kind === 'fast' && e.type === 'deactivate');
      expect(deactivations.length - before, 'some passivations raced the bursts').to.be.greaterThan(
        10,
      );
      expect(overlaps(nodes.log)).to.deep.equal([]);
    });
  });
}

passivationSuite(
  'MemoryProvider',
  () => Promise.resolve({ remoteCaller: false }),
  () => undefined,
);

let etcd: EtcdHandle | undefined;
passivationSuite(
  'real etcd',
  async () => {
    etcd = await startEtcd();
    const endpoints = etcd.endpoints;
    return {
      remoteCaller: true,
      provider: () =>
        new EtcdProvider({
          endpoints,
          ttlSeconds: 3,
          prefix: '/granary-passivation',
          logger: quiet,
        }),
    };
  },
  () => etcd?.stop(),
);
