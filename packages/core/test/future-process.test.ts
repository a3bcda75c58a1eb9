import { expect } from 'chai';
import {
  AbortError,
  DeadLetterError,
  DeadLetterEvent,
  InvalidArgumentError,
  PID,
  Props,
  TimeoutError,
  type ActorSystem,
} from '../src/index';
import { deferred, testSystem } from './support';

describe('FutureProcess (requests)', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem({ timers: { tickMs: 5 } });
  });
  afterEach(() => system.shutdown());

  const silent = Props.fromFunc(() => {});
  const echo = Props.fromFunc((ctx) => {
    if (typeof ctx.message === 'string') ctx.respond(ctx.message);
  });

  it('resolves with the reply and unregisters the future', async () => {
    const pid = system.root.spawn(echo);
    const before = system.registry.size;
    expect(await system.root.request(pid, 'hi')).to.equal('hi');
    expect(system.registry.size).to.equal(before);
  });

  it('rejects with the Error the target responded with', async () => {
    const pid = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message === 'boom') ctx.respond(new RangeError('bad input'));
      }),
    );
    const err = await system.root.request(pid, 'boom').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RangeError);
  });

  it('creates no timer when no timeout is asked for', async () => {
    const pid = system.root.spawn(echo);
    const pending = system.root.request(pid, 'x');
    expect(system.timers.size).to.equal(0);
    await pending;
  });

  describe('timeoutMs', () => {
    it('rejects with TimeoutError naming the target and the timeout', async () => {
      const pid = system.root.spawnNamed(silent, 'ponger');
      const err = (await system.root
        .request(pid, 'ping', { timeoutMs: 20 })
        .catch((e: unknown) => e)) as TimeoutError;
      expect(err).to.be.instanceOf(TimeoutError);
      expect(err.code).to.equal('ERR_TIMEOUT');
      expect(err.message)
        .to.contain('nonhost/ponger')
        .and.contain('20 ms')
        .and.contain('timeoutMs');
    });

    it('makes its TimeoutError without a stack (the timer wheel is all it would show)', async () => {
      const pid = system.root.spawnNamed(silent, 'quiet');
      const err = (await system.root
        .request(pid, 'ping', { timeoutMs: 20 })
        .catch((e: unknown) => e)) as TimeoutError;
      expect(err).to.be.instanceOf(TimeoutError);
      expect(err.stack).to.equal(`TimeoutError: ${err.message}`);
      // Only the timer's error: a TimeoutError made elsewhere still captures its stack.
      expect(new TimeoutError('a/b', 1).stack).to.contain('\n    at ');
    });

    it('sends a reply that arrives after the timeout to dead letters', async () => {
      const late = deferred<DeadLetterEvent>();
      system.eventStream.subscribe(DeadLetterEvent, (e) => late.resolve(e));
      let requester: PID | undefined;
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'ask') requester = ctx.sender;
          if (ctx.message === 'answer-now' && requester) ctx.send(requester, 'too late');
        }),
      );
      const err = await system.root.request(pid, 'ask', { timeoutMs: 10 }).catch((e) => e);
      expect(err).to.be.instanceOf(TimeoutError);
      system.root.send(pid, 'answer-now');
      const event = await late.promise;
      expect(event.message).to.equal('too late');
      expect(event.pid.equals(requester)).to.equal(true);
    });

    it('sends a respond that comes after the timeout to dead letters', async () => {
      const late = deferred<DeadLetterEvent>();
      system.eventStream.subscribe(DeadLetterEvent, (e) => late.resolve(e));
      const gate = deferred();
      const pid = system.root.spawn(
        Props.fromFunc(async (ctx) => {
          if (ctx.message !== 'ask') return;
          await gate.promise;
          ctx.respond('too late');
        }),
      );
      const err = await system.root.request(pid, 'ask', { timeoutMs: 10 }).catch((e) => e);
      expect(err).to.be.instanceOf(TimeoutError);
      gate.resolve();
      const event = await late.promise;
      expect(event.message).to.equal('too late');
      expect(event.pid.id).to.match(/^f\$[\w-]{10}$/);
    });
  });

  describe('signal', () => {
    it('rejects with AbortError when aborted', async () => {
      const pid = system.root.spawn(silent);
      const controller = new AbortController();
      const pending = system.root.request(pid, 'x', { signal: controller.signal });
      controller.abort();
      const err = await pending.catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AbortError);
      expect((err as AbortError).code).to.equal('ERR_ABORTED');
    });

    it('rejects at once and sends nothing when already aborted', async () => {
      let received = 0;
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'x') received++;
          if (ctx.message === 'count') ctx.respond(received);
        }),
      );
      const err = await system.root
        .request(pid, 'x', { signal: AbortSignal.abort() })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AbortError);
      expect(await system.root.request(pid, 'count')).to.equal(0);
    });
  });

  describe('options from JavaScript', () => {
    it('refuses a timeoutMs that is a string (it made the deadline a string: no timeout)', async () => {
      const pid = system.root.spawn(silent);
      const before = system.registry.size;
      const options = { timeoutMs: '20' } as unknown as { timeoutMs: number };
      const err = await system.root.request(pid, 'x', options).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).argument).to.equal('options.timeoutMs');
      expect((err as Error).message).to.include("'20' (a string)");
      expect(system.registry.size).to.equal(before);
    });

    it('refuses a signal that is no AbortSignal, typed, leaving no future behind', async () => {
      const pid = system.root.spawn(silent);
      const before = system.registry.size;
      const options = { signal: { aborted: false } } as unknown as { signal: AbortSignal };
      const err = await system.root.request(pid, 'x', options).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).argument).to.equal('options.signal');
      expect(system.registry.size).to.equal(before);
    });
  });

  describe('dead target', () => {
    it('rejects at once with DeadLetterError, not after the timeout', async () => {
      const start = Date.now();
      const missing = new PID(system.address, 'nobody');
      const err = await system.root
        .request(missing, 'x', { timeoutMs: 60_000 })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(DeadLetterError);
      expect((err as DeadLetterError).reason).to.equal('not-found');
      expect(Date.now() - start).to.be.below(1000);
      expect(system.deadLetters.byReason.get('not-found')).to.equal(1);
    });

    it('rejects requests still queued when the target stops', async () => {
      const gate = deferred();
      const pid = system.root.spawn(
        Props.fromFunc(async (ctx) => {
          if (ctx.message === 'block') await gate.promise;
        }),
      );
      system.root.send(pid, 'block');
      const queued = system.root.request(pid, 'x').catch((e: unknown) => e);
      system.root.stop(pid);
      gate.resolve();
      const err = await queued;
      expect(err).to.be.instanceOf(DeadLetterError);
      expect((err as DeadLetterError).reason).to.equal('stopped');
    });
  });

  it('keeps thousands of requests in flight beyond the future table', async () => {
    const pid = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message === 'number') ctx.respond(ctx.message * 2);
      }),
    );
    const n = 10_000;
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) => system.root.request<number>(pid, i)),
    );
    expect(replies.every((r, i) => r === i * 2)).to.equal(true);
    expect(system.registry.size).to.equal(1);
  });
});
