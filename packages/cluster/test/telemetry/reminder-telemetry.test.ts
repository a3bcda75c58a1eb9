import { expect } from 'chai';
import { trace } from '@opentelemetry/api';
import { errorsOnlyLogger } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { MemoryReminderStore } from '../../src/reminders/memory/memory-reminder-store';
import { isReminderFire } from '../../src/reminders/reminder';
import { pointsOf, startTestSdk, valueOf, type TestSdk } from './fixtures/test-sdk';

/** What the grains saw: fires whose turn ended without throwing, and fires that threw. */
let ok = 0;
let threw = 0;
const byGrain = new Map<string, number>();

/** Throws on the first attempt of a job; counts every fire. */
class Ticker implements Grain {
  receive(ctx: GrainContext): unknown {
    const m = ctx.message;
    if (!isReminderFire(m)) return undefined;
    byGrain.set(ctx.identity, (byGrain.get(ctx.identity) ?? 0) + 1);
    if (m.job && m.attempt === 1) {
      threw++;
      throw new Error('first attempt fails');
    }
    ok++;
    return undefined;
  }
}

const until = async (check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> => {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('reminder metrics and spans after a known workload (SDK, in-memory exporters)', function () {
  this.timeout(60_000);
  let sdk: TestSdk;
  let cluster: Cluster;

  before(async () => {
    sdk = startTestSdk(true);
    cluster = await Cluster.start({
      name: 'reminder-telemetry',
      id: 'rt',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('ticker', () => new Ticker(), { shardCount: 4 })],
      reminders: { store: new MemoryReminderStore() },
      logger: errorsOnlyLogger,
      telemetry: { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider },
    });
    await until(() => cluster.heldShards('ticker').length === 4, 'the member holds every shard');
  });
  after(async () => {
    await cluster?.shutdown({ graceful: false });
    await sdk?.shutdown();
  });

  it('counts fires by outcome, skipped ticks, jobs, loaded reminders and tardiness exactly; a root span per fire linked to the set', async () => {
    // Three reminders (one set inside a span: its fires link to it), one behind by 3.5 periods
    // under 'skip' (3 ticks skipped), one job whose first attempt throws (retried once).
    const tracer = sdk.tracerProvider.getTracer('test');
    let setSpanId = '';
    await tracer.startActiveSpan('set-schedule', async (span) => {
      setSpanId = span.spanContext().spanId;
      await cluster
        .reminders('ticker', 'r0')
        .set('beat', { dueInMs: 50, periodMs: 200, catchUp: 'all' });
      span.end();
    });
    for (const id of ['r1', 'r2']) {
      await cluster
        .reminders('ticker', id)
        .set('beat', { dueInMs: 50, periodMs: 200, catchUp: 'all' });
    }
    await cluster
      .reminders('ticker', 'late')
      .set('beat', { dueAt: Date.now() - 3500, periodMs: 1000, catchUp: 'skip' });
    await cluster.reminders('ticker', 'job').set('once', { dueInMs: 30, backoffMs: 50 });

    let m = await sdk.collect();
    expect(
      valueOf(m, 'granary.reminders.loaded', {
        'granary.grain.kind': 'ticker',
        'granary.reminder.type': 'reminder',
      }),
      'loaded reminders',
    ).to.equal(4);

    await until(
      () => ['r0', 'r1', 'r2'].every((id) => (byGrain.get(id) ?? 0) >= 3),
      '3 fires each',
    );
    await until(
      () => (byGrain.get('job') ?? 0) === 2 && (byGrain.get('late') ?? 0) >= 1,
      'the job done, the late reminder fired',
    );
    for (const id of ['r0', 'r1', 'r2', 'late'])
      await cluster.reminders('ticker', id).delete('beat');
    await until(() => cluster.reminderStats()!.jobsDone === 1, 'the job recorded done');
    // Every claimed fire answered: fired = delivered + grain errors + undelivered.
    await until(() => {
      const s = cluster.reminderStats()!;
      return s.fired === s.delivered + s.grainErrors + s.undelivered;
    }, 'no fire in flight');

    m = await sdk.collect();
    const stats = cluster.reminderStats()!;
    expect(
      valueOf(m, 'granary.reminder.fires', { 'granary.outcome': 'delivered' }),
      'delivered',
    ).to.equal(ok);
    expect(
      valueOf(m, 'granary.reminder.fires', { 'granary.outcome': 'grain_error' }),
      'grain errors',
    ).to.equal(1);
    expect(threw).to.equal(1);
    expect(
      valueOf(m, 'granary.reminder.fires', { 'granary.outcome': 'undelivered' }),
      'undelivered',
    ).to.equal(0);
    expect(valueOf(m, 'granary.reminder.ticks.skipped'), 'skipped').to.equal(3);
    expect(
      valueOf(m, 'granary.reminder.jobs', { 'granary.outcome': 'done' }),
      'jobs done',
    ).to.equal(1);
    expect(valueOf(m, 'granary.reminder.jobs', { 'granary.outcome': 'failed' })).to.equal(0);
    expect(valueOf(m, 'granary.reminder.job.retries'), 'job retries').to.equal(1);
    expect(valueOf(m, 'granary.reminder.claims.refused', { 'granary.reason': 'taken' })).to.equal(
      0,
    );
    expect(
      valueOf(m, 'granary.reminders.loaded', {
        'granary.grain.kind': 'ticker',
        'granary.reminder.type': 'reminder',
      }),
      'loaded after delete',
    ).to.equal(0);
    // One tardiness value per tick fired and per first job attempt: every fire but the retry.
    const tardiness = pointsOf(m, 'granary.reminder.tardiness');
    expect(
      tardiness.reduce((n, p) => n + (p.count ?? 0), 0),
      'tardiness count',
    ).to.equal(ok + threw - 1);
    expect(stats.tardiness.count).to.equal(ok + threw - 1);

    // A root span per fire, the delivering call its child; r0's fires link to the set's span.
    const spans = sdk.spans.getFinishedSpans();
    const fireSpans = spans.filter((s) => s.name === 'granary.reminder.fire');
    expect(fireSpans.length, 'fire spans').to.equal(ok + threw);
    for (const s of fireSpans) expect(s.parentSpanContext, s.name).to.equal(undefined);
    const r0 = fireSpans.filter((s) => s.attributes['granary.grain.key'] === 'r0');
    expect(r0.length).to.be.greaterThanOrEqual(3);
    for (const s of r0) {
      expect(
        s.links.map((l) => l.context.spanId),
        'link to the set',
      ).to.deep.equal([setSpanId]);
      expect(s.attributes['granary.reminder.name']).to.equal('beat');
      expect(s.attributes['granary.reminder.type']).to.equal('reminder');
    }
    expect(r0.map((s) => s.attributes['granary.reminder.tick']).sort()).to.include.members([
      0, 1, 2,
    ]);
    const jobSpans = fireSpans.filter((s) => s.attributes['granary.grain.key'] === 'job');
    expect(
      jobSpans.map((s) => s.status.code).sort(),
      'the failed attempt is an error',
    ).to.deep.equal([0, 2]);
    const fireIds = new Set(fireSpans.map((s) => s.spanContext().spanId));
    const children = spans.filter((s) => fireIds.has(s.parentSpanContext?.spanId ?? ''));
    expect(children.length, 'a call span under each fire').to.equal(fireSpans.length);
    expect(trace.getActiveSpan()).to.equal(undefined);
  });
});
