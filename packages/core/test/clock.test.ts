import { expect } from 'chai';
import {
  ExponentialBackoffStrategy,
  Props,
  type PID,
  ReceiveTimeout,
  Started,
  TimeoutError,
  type ActorSystem,
  type Context,
} from '../src/index';
import { ManualClock } from '@granary/testkit';
import { testSystem, ticks } from './support';

describe('ActorSystem clock', () => {
  let clock: ManualClock;
  let system: ActorSystem;
  beforeEach(() => {
    clock = new ManualClock();
    system = testSystem({ clock, timers: { tickMs: 10 } });
  });
  afterEach(() => system.shutdown());

  it('dates a request deadline on the injected clock', async () => {
    const pid = system.root.spawn(Props.fromFunc((ctx) => ctx.respond(ctx.deadline)));
    const deadline = await system.root.request(pid, 'q', { timeoutMs: 5_000 });
    expect(deadline).to.equal(clock.now() + 5_000);
  });

  it('times a request out when virtual time passes its timeout, not before', async () => {
    const silent = system.root.spawn(Props.fromFunc(() => {}));
    let outcome: unknown = 'pending';
    system.root.request(silent, 'q', { timeoutMs: 1_000 }).then(
      (v) => (outcome = v),
      (e: unknown) => (outcome = e),
    );
    clock.advance(990);
    await ticks(2);
    expect(outcome).to.equal('pending');
    clock.advance(30); // at most one tick (10 ms) late
    await ticks(2);
    expect(outcome).to.be.instanceOf(TimeoutError);
  });

  it('delivers ReceiveTimeout after virtual idle time', async () => {
    const seen: unknown[] = [];
    const pid = system.root.spawn(
      Props.fromFunc((ctx: Context) => {
        if (ctx.message === 'arm') ctx.setReceiveTimeout(500);
        else if (ctx.message instanceof ReceiveTimeout) seen.push(clock.now());
      }),
    );
    system.root.send(pid, 'arm');
    await ticks(2);
    clock.advance(400);
    await ticks(2);
    expect(seen).to.have.length(0);
    clock.advance(200);
    await ticks(2);
    expect(seen).to.have.length(1);
  });

  it('restarts after an exponential backoff measured in virtual time', async () => {
    let starts = 0;
    const child = Props.fromFunc((ctx: Context) => {
      if (ctx.message === 'fail') throw new Error('boom');
      if (ctx.message instanceof Started) starts++;
    });
    const parent = system.root.spawn(
      Props.fromFunc(
        (ctx: Context) => {
          if (ctx.message === 'spawn') ctx.respond(ctx.spawn(child));
        },
        { supervisor: new ExponentialBackoffStrategy({ initialBackoffMs: 1_000 }) },
      ),
    );
    const kid = await system.root.request<PID>(parent, 'spawn');
    await ticks(2);
    expect(starts).to.equal(1);
    system.root.send(kid, 'fail');
    await ticks(2);
    clock.advance(900);
    await ticks(2);
    expect(starts).to.equal(1);
    clock.advance(200);
    await ticks(4);
    expect(starts).to.equal(2);
  });

  it('hands its random source to what runs on the system', () => {
    const seeded = testSystem({ random: () => 0.25 });
    expect(seeded.random()).to.equal(0.25);
    void seeded.shutdown();
    expect(system.random).to.equal(Math.random);
  });
});
