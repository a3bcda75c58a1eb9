import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { errorsOnlyLogger, freePort, waitUntil } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { OPS_PATHS } from '../../src/ops/ops-options';
import type { ClusterProvider } from '../../src/providers/cluster-provider';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

class WhoAmI implements Grain {
  receive(ctx: GrainContext): unknown {
    return { member: ctx.cluster.id, activationId: ctx.activationId };
  }
}

/** A latch: `wait` resolves once `open` was called. */
function latch(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** `provider` with `method` held until the returned latch opens. */
function holding<K extends 'join' | 'markLeaving'>(
  provider: ClusterProvider,
  method: K,
): { provider: ClusterProvider; entered: Promise<void>; release: () => void } {
  const gate = latch();
  const entered = latch();
  const original = provider[method].bind(provider) as (...args: unknown[]) => Promise<void>;
  const wrapped = Object.create(provider) as ClusterProvider;
  (wrapped as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    entered.open();
    await gate.wait;
    return original(...args);
  };
  return { provider: wrapped, entered: entered.wait, release: gate.open };
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : { text } };
}

describe('ops server (Cluster.start({ ops }))', function () {
  this.timeout(20_000);
  let table: MemoryClusterTable;
  const running: Cluster[] = [];

  beforeEach(() => {
    table = new MemoryClusterTable();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.shutdown({ graceful: false })));
  });

  const start = async (
    id: string,
    options: { provider?: ClusterProvider; port?: number; maxEventLoopDelayMs?: number } = {},
  ): Promise<Cluster> => {
    const c = await Cluster.start({
      name: 'ops',
      id,
      provider: options.provider ?? new MemoryProvider(table, { ttlMs: 1000 }),
      kinds: [kind('who', () => new WhoAmI(), { shardCount: 8 })],
      remote: { host: '127.0.0.1', port: 0 },
      claimRetryMs: 100,
      logger: errorsOnlyLogger,
      ops: { port: options.port ?? 0, maxEventLoopDelayMs: options.maxEventLoopDelayMs },
    });
    running.push(c);
    return c;
  };

  it('listens on loopback by default and answers the probes with JSON', async () => {
    const c = await start('a');
    expect(c.ops!.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const path of [OPS_PATHS.livez, OPS_PATHS.readyz, OPS_PATHS.startupz]) {
      const r = await get(c.ops!.url + path);
      expect(r.status, path).to.equal(200);
      expect(r.body.status, path).to.equal('ok');
    }
    expect((await get(`${c.ops!.url}/nothing`)).status).to.equal(404);
    expect((await fetch(c.ops!.url + OPS_PATHS.readyz, { method: 'POST' })).status).to.equal(405);
    // No Prometheus exporter given: no /metrics, and the answer says which option serves it.
    const metrics = await get(c.ops!.url + OPS_PATHS.metrics);
    expect(metrics.status).to.equal(404);
    expect(metrics.body.error).to.contain('ops.prometheus').and.contain('telemetry.meterProvider');
  });

  it('a port in use fails Cluster.start with an InvalidOptionError naming ops.port', async () => {
    const first = await start('a');
    const err = await start('b', { port: first.ops!.port }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'ops.port');
    expect((err as Error).message).to.contain('EADDRINUSE');
  });

  it('/startupz and /readyz answer 503 while the member joins, 200 once joined', async () => {
    const port = await freePort();
    const held = holding(new MemoryProvider(table, { ttlMs: 1000 }), 'join');
    const starting = start('a', { provider: held.provider, port });
    await held.entered;
    const url = `http://127.0.0.1:${port}`;
    const startup = await get(url + OPS_PATHS.startupz);
    expect(startup.status).to.equal(503);
    expect(startup.body.checks).to.deep.equal({ member: 'joining' });
    expect((await get(url + OPS_PATHS.readyz)).status).to.equal(503);
    expect((await get(url + OPS_PATHS.livez)).status).to.equal(200);
    held.release();
    await starting;
    expect((await get(url + OPS_PATHS.startupz)).status).to.equal(200);
    expect((await get(url + OPS_PATHS.readyz)).status).to.equal(200);
  });

  it('/readyz turns 503 at the start of a graceful leave, while the member still answers calls', async () => {
    const a = await start('a');
    const held = holding(new MemoryProvider(table, { ttlMs: 1000 }), 'markLeaving');
    const b = await start('b', { provider: held.provider });
    await waitUntil(
      () =>
        a.heldShards('who').length + b.heldShards('who').length === 8 &&
        a.topology.members.length === 2,
      'both members hold their shards',
      { on: [(l) => a.on('shard-acquired', l), (l) => b.on('shard-acquired', l)], timeoutMs: 5000 },
    );
    // A grain b owns, active on b.
    let id = 0;
    while (b.ownerOf('who', b.shardOf('who', `g-${id}`))?.id !== 'b') id++;
    const grain = `g-${id}`;
    const before = await a.request<{ member: string; activationId: string }>('who', grain, 'hi');
    expect(before.member).to.equal('b');
    expect((await get(b.ops!.url + OPS_PATHS.readyz)).status).to.equal(200);

    const leaving = b.shutdown({ graceful: true });
    await held.entered;
    const ready = await get(b.ops!.url + OPS_PATHS.readyz);
    expect(ready.status).to.equal(503);
    expect(ready.body.checks).to.include({ member: 'leaving' });
    // Not ready, yet still serving: the same activation on b answers.
    const during = await a.request<{ member: string; activationId: string }>('who', grain, 'hi');
    expect(during).to.deep.equal(before);
    expect((await get(b.ops!.url + OPS_PATHS.livez)).status).to.equal(200);
    held.release();
    await leaving;
    running.splice(running.indexOf(b), 1);
    const after = await a.request<{ member: string }>('who', grain, 'hi');
    expect(after.member).to.equal('a');
  });

  it('/readyz reports an added readiness check (load shedding) and a fenced member', async () => {
    const c = await start('a');
    let shedding = true;
    const remove = c.addReadinessCheck('load', () => (shedding ? 'shedding load' : undefined));
    const r = await get(c.ops!.url + OPS_PATHS.readyz);
    expect(r.status).to.equal(503);
    expect(r.body.checks).to.deep.equal({
      member: 'ok',
      lease: 'ok',
      overload: 'ok',
      load: 'shedding load',
    });
    shedding = false;
    expect((await get(c.ops!.url + OPS_PATHS.readyz)).status).to.equal(200);
    remove();
    // The memory provider re-registers at once: read what /readyz serves while fenced.
    const fenced = new Promise<ReturnType<Cluster['readiness']>>((resolve) =>
      c.on('lease-lost', () => resolve(c.readiness())),
    );
    table.expireMember('a');
    const report = await fenced;
    expect(report.ok).to.equal(false);
    expect(report.checks)
      .to.have.property('lease')
      .that.matches(/fenced/);
  });

  it('/livez fails when the event loop was blocked past its bound', async () => {
    const c = await start('a', { maxEventLoopDelayMs: 300 });
    expect((await get(c.ops!.url + OPS_PATHS.livez)).status).to.equal(200);
    const until = Date.now() + 800;
    while (Date.now() < until) {
      // a synchronous turn holding the loop
    }
    const r = await get(c.ops!.url + OPS_PATHS.livez);
    expect(r.status).to.equal(503);
    expect(r.body.eventLoopDelayMs).to.be.at.least(500);
    expect(r.body.checks)
      .to.have.property('eventLoop')
      .that.matches(/maxEventLoopDelayMs 300/);
  });

  it('serves /metrics in Prometheus text format through @opentelemetry/exporter-prometheus', async () => {
    const prometheus = new PrometheusExporter({ preventServerStart: true });
    const meterProvider = new MeterProvider({ readers: [prometheus] });
    const c = await Cluster.start({
      name: 'ops',
      id: 'p',
      provider: new MemoryProvider(table, { ttlMs: 1000 }),
      kinds: [kind('who', () => new WhoAmI(), { shardCount: 8 })],
      remote: { host: '127.0.0.1', port: 0 },
      logger: errorsOnlyLogger,
      telemetry: { meterProvider },
      ops: { port: 0, prometheus },
    });
    running.push(c);
    await waitUntil(() => c.heldShards('who').length === 8, 'shards held', {
      on: [(l) => c.on('shard-acquired', l)],
    });
    await c.request('who', 'w-1', 'hi');
    const res = await fetch(c.ops!.url + OPS_PATHS.metrics);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/text\/plain/);
    const text = await res.text();
    expect(text).to.match(/^granary_grain_activations\{.*granary_grain_kind="who".*\} 1$/m);
    expect(text).to.match(/^granary_shards_held\{.*granary_grain_kind="who".*\} 8$/m);
    expect(text).to.match(/^granary_grain_calls_total\{.*granary_call_outcome="ok".*\} 1$/m);
    expect(text).to.match(
      /^granary_grain_call_duration_bucket\{.*granary_grain_kind="who".*le="\+Inf"\} 1$/m,
    );
    await meterProvider.shutdown();
  });
});
