import { join } from 'node:path';
import { expect } from 'chai';
import {
  startEtcdCluster,
  TestCluster,
  type EtcdClusterHandle,
  type EtcdMemberHandle,
} from '@granary/testkit';
import type { Cluster } from '../../src/cluster';
import { DEFAULT_ETCD_PROVIDER_OPTIONS } from '../../src/providers/etcd/etcd-provider-options';
import { startEtcdClient } from '../fixtures/etcd-client';

const CLUSTER = 'election';
const GRAINS = 200;
const SHARDS = 64;
/** Concurrent callers: enough to see a hiccup in every 1 s window, light for 2 shared cores. */
const CALLERS = 50;
const CALL_TIMEOUT_MS = 5000;
/** How long calls keep flowing after a fault: past the TTL, so a missed keep-alive would show. */
const OBSERVE_MS = 7000;

/** Calls per 1 s window (by completion time): ok and failed. */
class Windows {
  readonly ok = new Map<number, number>();
  readonly failed = new Map<number, number>();
  readonly failures: string[] = [];
  private readonly start = Date.now();

  record(ok: boolean, err?: unknown): void {
    const w = Math.floor((Date.now() - this.start) / 1000);
    const map = ok ? this.ok : this.failed;
    map.set(w, (map.get(w) ?? 0) + 1);
    if (!ok && this.failures.length < 5) this.failures.push(String(err));
  }

  /** The lowest ok / (ok + failed) of any window with calls, and the window count. */
  minAvailability(): { min: number; windows: number; calls: number } {
    let min = 1;
    let calls = 0;
    const keys = new Set([...this.ok.keys(), ...this.failed.keys()]);
    for (const w of keys) {
      const ok = this.ok.get(w) ?? 0;
      const failed = this.failed.get(w) ?? 0;
      calls += ok + failed;
      min = Math.min(min, ok / (ok + failed));
    }
    return { min, windows: keys.size, calls };
  }
}

/** CALLERS closed loops of idempotent calls until stopped. */
function load(client: Cluster, windows: Windows): { stop(): Promise<void> } {
  let running = true;
  const loops = Array.from({ length: CALLERS }, async (_, i) => {
    let n = i;
    while (running) {
      n = (n + CALLERS) % GRAINS;
      try {
        await client.request('echo', `g-${n}`, 'hi', {
          timeoutMs: CALL_TIMEOUT_MS,
          idempotent: true,
        });
        windows.record(true);
      } catch (err) {
        windows.record(false, err);
      }
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe('riding out etcd trouble at default settings (3-member etcd)', function () {
  this.timeout(120_000);
  let etcd: EtcdClusterHandle;
  let tc: TestCluster | undefined;
  let client: Cluster | undefined;

  before(async () => {
    etcd = await startEtcdCluster({ size: 3 });
    tc = await TestCluster.start({
      size: 3,
      script: join(__dirname, '../grains/fixtures/grain-node.js'),
      // No ttlSeconds: every lease setting at its default.
      config: (ctx) => ({
        etcdEndpoints: etcd.endpoints,
        id: ctx.id,
        cluster: CLUSTER,
        shardCount: SHARDS,
        idleTimeoutMs: 60_000,
      }),
    });
    client = await startEtcdClient({
      name: CLUSTER,
      endpoints: etcd.endpoints,
      prefix: '/granary-grains',
    });
  });
  after(async () => {
    await client?.shutdown({ graceful: false });
    await tc?.stop();
    await etcd.stop();
  });

  function fences(): number {
    return (tc?.nodes ?? [])
      .flatMap((n) => n.process?.lines ?? [])
      .filter((l) => l.data.type === 'lease' && l.data.state === 'lost').length;
  }

  async function ride(
    what: string,
    victim: () => Promise<EtcdMemberHandle>,
    fault: 'kill' | 'pause' = 'kill',
  ): Promise<void> {
    const windows = new Windows();
    const calls = load(client!, windows);
    let clientFenced = 0;
    const off = client!.on('lease-lost', () => clientFenced++);
    try {
      await new Promise((r) => setTimeout(r, 1000)); // calls flowing before the fault
      const member = await victim();
      if (fault === 'kill') await member.kill();
      else member.pause();
      await new Promise((r) => setTimeout(r, OBSERVE_MS));
      await calls.stop();
      if (fault === 'kill') await member.restart();
      else member.resume();
    } finally {
      off();
    }
    const { min, windows: count, calls: total } = windows.minAvailability();
    console.log(
      `      ${what}: ${total} calls in ${count} windows, min availability ${min.toFixed(4)}, ` +
        `failed ${[...windows.failed.values()].reduce((a, b) => a + b, 0)}, fenced ${fences()}`,
    );
    expect(fences(), 'nodes fenced').to.equal(0);
    expect(clientFenced, 'client fenced').to.equal(0);
    expect(windows.failures, 'failed calls').to.deep.equal([]);
    expect(min, 'lowest availability in a 1 s window').to.be.at.least(0.99);
  }

  it('killing the etcd leader fences no node and fails no call', async () => {
    await ride('leader killed', () => etcd.leader());
  });

  it('SIGSTOP of the etcd leader fences no node and fails no call', async () => {
    // Unlike a kill, a paused member keeps its connections open and answers nothing.
    await ride('leader paused', () => etcd.leader(), 'pause');
  });

  it('killing an etcd follower fences no node and fails no call', async () => {
    await ride('follower killed', () => etcd.follower());
  });

  it('SIGKILL of a node at the defaults: its grains answer from a survivor within TTL + 1 s', async () => {
    const where = new Map<string, string>();
    for (let i = 0; i < GRAINS; i++) {
      const r = await client!.request<{ member: string }>('echo', `g-${i}`, 'hi');
      where.set(`g-${i}`, r.member);
    }
    const victim = tc!.nodes[0];
    const hosted = [...where].filter(([, m]) => m === victim.id).map(([id]) => id);
    expect(hosted.length).to.be.greaterThan(0);
    const killedAt = Date.now();
    await tc!.kill(victim);
    const times = await Promise.all(
      hosted.map(async (id) => {
        for (;;) {
          const r = await client!
            .request<{ member: string }>('echo', id, 'hi', { timeoutMs: 10_000, idempotent: true })
            .catch(() => undefined);
          if (r && r.member !== victim.id) return Date.now() - killedAt;
        }
      }),
    );
    const worst = Math.max(...times);
    console.log(`      SIGKILL to every grain answering again: ${worst} ms (TTL 5 s)`);
    expect(worst).to.be.at.most(DEFAULT_ETCD_PROVIDER_OPTIONS.ttlSeconds * 1000 + 1000);
  });
});
