import { expect } from 'chai';
import { errorsOnlyLogger, waitUntil, type Subscribe } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { OverloadedError } from '../../src/overload/errors';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { startTestSdk, valueOf, type TestSdk } from './fixtures/test-sdk';

/** Turns of a gate grain wait until the test opens its gate (by identity). */
const gates = new Map<string, { started: number; open: () => void; opened: Promise<void> }>();
const gateListeners = new Set<() => void>();

function gateOf(identity: string): { started: number; open: () => void; opened: Promise<void> } {
  let g = gates.get(identity);
  if (g === undefined) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    g = { started: 0, open, opened };
    gates.set(identity, g);
  }
  return g;
}

class Gate implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const g = gateOf(ctx.identity);
    g.started++;
    for (const l of [...gateListeners]) l();
    await g.opened;
    return 'done';
  }
}

const onGate: Subscribe = (l) => {
  gateListeners.add(l);
  return () => gateListeners.delete(l);
};
/** Checks a condition no event announces (a message posted to a mailbox) every 5 ms. */
const polled: Subscribe = (l) => {
  const t = setInterval(l, 5);
  return () => clearInterval(t);
};

/** The error a call failed with (fails the test if it answered). */
async function failureOf(p: Promise<unknown>, what: string): Promise<Error> {
  return p.then(
    (v) => expect.fail(`${what} answered ${String(v)}`),
    (err: Error) => err,
  );
}

describe('Overload metrics after a known workload (SDK MeterProvider, in-memory reader)', function () {
  this.timeout(30_000);
  const table = new MemoryClusterTable();
  let hostSdk: TestSdk;
  let callerSdk: TestSdk;
  let host: Cluster;
  let caller: Cluster;

  const start = (id: string, sdk: TestSdk, options: Record<string, unknown>) =>
    Cluster.start({
      name: 'overload-metrics',
      id,
      provider: new MemoryProvider(table, { ttlMs: 1000 }),
      remote: { host: '127.0.0.1', port: 0 },
      claimRetryMs: 100,
      logger: errorsOnlyLogger,
      telemetry: { meterProvider: sdk.meterProvider },
      kinds: [],
      ...options,
    });

  before(async () => {
    hostSdk = startTestSdk(false);
    callerSdk = startTestSdk(false);
    host = await start('host', hostSdk, {
      // A mailbox of one: a turn running, one call waiting, the next refused.
      kinds: [kind('gate', () => new Gate(), { shardCount: 2, mailbox: { capacity: 1 } })],
    });
    caller = await start('caller', callerSdk, { overload: { maxOutstandingCalls: 4 } });
    await waitUntil(
      () => caller.topology.members.length === 2 && host.heldShards('gate').length === 2,
      'the host holds both shards and the caller sees it',
      {
        on: [(l) => host.on('shard-acquired', l), (l) => caller.on('topology', l)],
        timeoutMs: 10_000,
      },
    );
  });

  after(async () => {
    for (const g of gates.values()) g.open();
    await caller?.shutdown({ graceful: false });
    await host?.shutdown({ graceful: false });
    await hostSdk?.shutdown();
    await callerSdk?.shutdown();
  });

  it('counts refusals by limit, drops by stage, retries and the gauges exactly', async () => {
    const long = { timeoutMs: 20_000 };
    // A runs on gate 'a' and holds it; B waits in its mailbox and expires there.
    const a = caller.request('gate', 'a', 'A', long);
    await waitUntil(() => gateOf('a').started === 1, "A's turn started", { on: [onGate] });
    const b = failureOf(caller.request('gate', 'a', 'B', { timeoutMs: 3_000 }), 'B');
    await waitUntil(() => host.overloadStats().pending === 2, 'B waits in the mailbox', {
      on: [polled],
    });
    // C finds the mailbox full and may not retry: one refusal.
    const c = await failureOf(caller.request('gate', 'a', 'C', { ...long, retries: 0 }), 'C');
    expect(OverloadedError.is(c) && c.limit, String(c)).to.equal('mailbox.capacity');
    // F may retry once: two refusals, one retry spent.
    const f = await failureOf(caller.request('gate', 'a', 'F', { ...long, retries: 1 }), 'F');
    expect(OverloadedError.is(f) && f.limit, String(f)).to.equal('mailbox.capacity');

    // X1 and X2 hold gate 'x': with A and B, four calls in flight, the caller's bound.
    const x1 = caller.request('gate', 'x', 'X1', long);
    await waitUntil(() => gateOf('x').started === 1, "X1's turn started", { on: [onGate] });
    const x2 = caller.request('gate', 'x', 'X2', long);
    await waitUntil(() => host.overloadStats().pending === 4, 'X2 waits in the mailbox', {
      on: [polled],
    });
    expect(caller.overloadStats().outstanding).to.equal(4);
    const during = await callerSdk.collect();
    expect(valueOf(during, 'granary.overload.outstanding')).to.equal(4);
    expect(valueOf(await hostSdk.collect(), 'granary.overload.pending')).to.equal(4);
    const d = await failureOf(caller.request('gate', 'y', 'D', long), 'D');
    expect(OverloadedError.is(d) && d.limit, String(d)).to.equal('maxOutstandingCalls');

    // B's deadline passes while it waits; then A ends and B is dropped before its turn.
    expect((await b).name).to.equal('DeadlineExceededError');
    gateOf('a').open();
    expect(await a).to.equal('done');
    gateOf('x').open();
    expect(await Promise.all([x1, x2])).to.deep.equal(['done', 'done']);
    // E's turn ends after E's deadline: its reply is dropped.
    const e = failureOf(caller.request('gate', 'r', 'E', { timeoutMs: 300 }), 'E');
    await waitUntil(() => gateOf('r').started === 1, "E's turn started", { on: [onGate] });
    expect((await e).name).to.equal('DeadlineExceededError');
    gateOf('r').open();
    await waitUntil(
      () => host.overloadStats().drops.reply === 1 && host.overloadStats().pending === 0,
      "E's reply dropped and nothing pending",
      { on: [polled] },
    );

    const limit = (l: string) => ({ 'granary.overload.limit': l });
    const stage = (s: string) => ({ 'granary.overload.stage': s });
    const cm = await callerSdk.collect();
    const ch = await hostSdk.collect();
    const figures = (rm: typeof cm) => ({
      outstanding: valueOf(rm, 'granary.overload.outstanding'),
      pending: valueOf(rm, 'granary.overload.pending'),
      shedding: valueOf(rm, 'granary.overload.shedding'),
      episodes: valueOf(rm, 'granary.overload.shedding.episodes'),
      refusals: Object.fromEntries(
        ['maxOutstandingCalls', 'maxPendingCalls', 'mailbox.capacity', 'loadShedding'].map((l) => [
          l,
          valueOf(rm, 'granary.overload.refusals', limit(l)),
        ]),
      ),
      heldBack: valueOf(rm, 'granary.overload.held_back'),
      drops: Object.fromEntries(
        ['send', 'arrival', 'mailbox', 'reply'].map((s) => [
          s,
          valueOf(rm, 'granary.overload.drops', stage(s)),
        ]),
      ),
      retries: {
        spent: valueOf(rm, 'granary.overload.retries', { 'granary.outcome': 'spent' }),
        refused: valueOf(rm, 'granary.overload.retries', { 'granary.outcome': 'refused' }),
      },
    });
    const none = { send: 0, arrival: 0, mailbox: 0, reply: 0 };
    expect(figures(cm), 'the caller').to.deep.equal({
      outstanding: 0,
      pending: 0,
      shedding: 0,
      episodes: 0,
      refusals: {
        maxOutstandingCalls: 1,
        maxPendingCalls: 0,
        'mailbox.capacity': 0,
        loadShedding: 0,
      },
      heldBack: 0,
      drops: none,
      retries: { spent: 1, refused: 0 },
    });
    expect(figures(ch), 'the host').to.deep.equal({
      outstanding: 0,
      pending: 0,
      shedding: 0,
      episodes: 0,
      refusals: {
        maxOutstandingCalls: 0,
        maxPendingCalls: 0,
        'mailbox.capacity': 3,
        loadShedding: 0,
      },
      heldBack: 0,
      drops: { ...none, mailbox: 1, reply: 1 },
      retries: { spent: 0, refused: 0 },
    });
    // The same refusals as the kind's mailbox counter, and as overloadStats (its own reader).
    expect(
      valueOf(ch, 'granary.grain.mailbox.rejections', { 'granary.grain.kind': 'gate' }),
    ).to.equal(3);
    expect(host.overloadStats().refused['mailbox.capacity']).to.equal(3);
    const delay = valueOf(ch, 'granary.overload.run_queue.delay.max');
    expect(delay, 'the host probes its run queue').to.be.a('number').at.least(0).and.below(60);
  });
});
