import * as path from 'node:path';
import { GranaryError } from '@granary/core';
import { TestCluster, type TestClusterNode } from '@granary/testkit';
import { expect } from 'chai';
import { GranaryClient } from '../../src/client/granary-client';
import { CallOutcomeUnknownError } from '../../src/errors';
import { quiet } from '../grains/memory-nodes';

const SCRIPT = path.join(__dirname, '../grains/fixtures/grain-node.js');
const SECRET = 'client-faults-secret-0123456789';
const TTL_S = 2;
const CALL_MS = 2000;
const CALLERS = 16;

interface Outcome {
  id: string;
  t0: number;
  t1: number;
  ok: boolean;
  member?: string;
  error?: string;
}

/** CALLERS loops of calls, each on its own grain (even ones idempotent), until stopped. */
class Load {
  readonly outcomes: Outcome[] = [];
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(private readonly client: GranaryClient) {
    this.loops = Array.from({ length: CALLERS }, (_, i) => this.loop(`g${i}`));
  }

  private async loop(identity: string): Promise<void> {
    while (this.running) {
      const t0 = Date.now();
      try {
        const r = await this.client.request<{ member: string }>('echo', identity, 'hi', {
          timeoutMs: CALL_MS,
          idempotent: Number(identity.slice(1)) % 2 === 0,
        });
        this.outcomes.push({ id: identity, t0, t1: Date.now(), ok: true, member: r.member });
      } catch (err) {
        const e = err as Error & { code?: string };
        const typed = err instanceof GranaryError ? '' : 'UNTYPED ';
        this.outcomes.push({
          id: identity,
          t0,
          t1: Date.now(),
          ok: false,
          error: `${typed}${e.name}/${e.code}: ${e.message}`,
        });
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  /**
   * Resolves once every caller had a call succeed that started after `since` and after the last
   * failure of any call (every grain served again); with the ms from `since` to that failure.
   */
  async recovered(since: number, boundMs: number): Promise<number> {
    const until = Date.now() + boundMs;
    while (Date.now() < until) {
      const recent = this.outcomes.filter((o) => o.t0 >= since);
      const lastFail = Math.max(since, ...recent.filter((o) => !o.ok).map((o) => o.t1));
      const served = new Set(recent.filter((o) => o.ok && o.t0 > lastFail).map((o) => o.id));
      if (served.size === CALLERS) return lastFail - since;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no recovery within ${boundMs} ms: ${this.summary(since)}`);
  }

  summary(since: number): string {
    const errs = new Map<string, number>();
    for (const o of this.outcomes)
      if (o.t0 >= since && !o.ok) errs.set(o.error!, (errs.get(o.error!) ?? 0) + 1);
    return [...errs].map(([e, n]) => `${n}× ${e}`).join('\n');
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}

describe('GranaryClient under member faults (node processes, real etcd)', function () {
  this.timeout(120_000);
  let tc: TestCluster;
  let client: GranaryClient;
  let load: Load;

  function addressOf(node: TestClusterNode): string {
    return node.process!.lines.find((l) => l.data.type === 'ready')!.data.address as string;
  }

  before(async () => {
    tc = await TestCluster.start({
      size: 4,
      etcd: true,
      script: SCRIPT,
      config: (ctx) => ({
        etcdEndpoints: ctx.etcdEndpoints,
        id: ctx.id,
        cluster: 'client-faults',
        ttlSeconds: TTL_S,
        shardCount: 16,
        idleTimeoutMs: 60_000,
        remote: { secret: SECRET },
      }),
    });
    client = await GranaryClient.connect({
      name: 'client-faults',
      gateways: [addressOf(tc.nodes[0]!)],
      secret: SECRET,
      topologyRefreshMs: 250,
      logger: quiet,
    });
    load = new Load(client);
    await load.recovered(Date.now(), 10_000);
  });
  after(async () => {
    await load?.stop();
    await client?.close();
    await tc?.stop();
  });

  afterEach(() => {
    const late = load.outcomes.filter((o) => o.t1 - o.t0 > CALL_MS + 200);
    expect(late.map((o) => `${o.t1 - o.t0} ms ${o.error ?? 'ok'}`)).to.deep.equal([]);
    const untyped = load.outcomes.filter((o) => o.error?.startsWith('UNTYPED'));
    expect(untyped.map((o) => o.error)).to.deep.equal([]);
  });

  /** The live member that served most of the load's latest calls (one that owns grains). */
  function busiest(): TestClusterNode {
    const count = new Map<string, number>();
    for (const o of load.outcomes.slice(-200)) {
      if (o.ok) count.set(o.member!, (count.get(o.member!) ?? 0) + 1);
    }
    const live = tc.live.filter((n) => count.has(n.id));
    live.sort((a, b) => count.get(b.id)! - count.get(a.id)!);
    return live[0]!;
  }

  it('the gateway it connected through is SIGKILLed mid-call: idempotent calls retried to a survivor, the others fail at once as CallOutcomeUnknownError', async () => {
    // Calls that take 1.5 s: those on the gateway are in flight when it dies.
    const slow = Array.from({ length: 16 }, (_, i) =>
      client
        .request<{ member: string }>('echo', `slow${i}`, 1500, {
          timeoutMs: 4 * TTL_S * 1000,
          idempotent: i % 2 === 0,
        })
        .then(
          (r) => ({ i, ok: true as const, member: r.member }),
          (err: unknown) => ({ i, ok: false as const, err, at: Date.now() }),
        ),
    );
    await new Promise((r) => setTimeout(r, 400));
    const at = Date.now();
    await tc.kill(tc.nodes[0]!);
    const settled = await Promise.all(slow);
    expect(settled.filter((s) => s.i % 2 === 0 && !s.ok)).to.deep.equal([]);
    const failed = settled.filter((s) => !s.ok);
    for (const f of failed) {
      expect(f.err).to.be.instanceOf(CallOutcomeUnknownError);
      expect((f.err as Error).message).to.match(/went away before replying.*idempotent: true/);
      expect(f.at - at, 'failed when the link closed, not at its deadline').to.be.below(1000);
    }
    await load.recovered(at, 15_000);
  });

  it('a member SIGSTOPped for 2×TTL: calls to it time out by their deadline, saying so; then survivors serve them', async () => {
    const victim = busiest();
    const at = Date.now();
    tc.pause(victim);
    await new Promise((r) => setTimeout(r, 2 * TTL_S * 1000));
    tc.resume(victim);
    await load.recovered(at, 20_000);
    // The calls in flight when it stopped (they started before it), and any after.
    const failed = load.outcomes.filter((o) => o.t1 >= at && !o.ok);
    expect(failed.length, 'calls to the paused member failed').to.be.greaterThan(0);
    for (const f of failed) expect(f.error).to.match(/DeadlineExceededError.*timed out after/);
  });

  it('a member drained gracefully (SIGTERM): no call fails, none served by it afterwards', async () => {
    const victim = busiest();
    const at = Date.now();
    await tc.stopNode(victim);
    const gone = Date.now();
    await load.recovered(at, 15_000);
    expect(load.summary(at)).to.equal('');
    const served = new Set(load.outcomes.filter((o) => o.ok && o.t0 > gone).map((o) => o.member));
    expect([...served]).to.not.include(victim.id);
  });
});
