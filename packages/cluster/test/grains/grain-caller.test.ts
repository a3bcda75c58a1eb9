import { expect } from 'chai';
import {
  ActorSystem,
  DeadLetterError,
  EndpointUnavailableError,
  InvalidArgumentError,
  MailboxFullError,
  SYSTEM_CLOCK,
  TimeoutError,
  UnknownKindError,
  type PID,
} from '@granary/core';
import { entrySender, type Entry, type Process } from '@granary/core/internal';
import {
  CallOutcomeUnknownError,
  DeadlineExceededError,
  GrainError,
  MemberFencedError,
  NoHostError,
  NotOwnerError,
} from '../../src/errors';
import { GrainCaller } from '../../src/grains/grain-caller';
import { OverloadedError } from '../../src/overload/errors';
import { resolveOverloadOptions, type OverloadOptions } from '../../src/overload/overload-options';
import { OverloadCounters } from '../../src/overload/overload-stats';
import type { Member, Topology } from '../../src/membership/topology';

/** What a fake member answers an attempt with: a reply, or an error reply. */
type Answer = (attempt: number) => unknown;

/** A member reached through an address resolver: it answers each attempt as scripted. */
class FakeMember implements Process {
  /** The grain ids of the attempts it got, in order. */
  readonly attempts: string[] = [];
  private waiter: (() => void) | undefined = undefined;

  constructor(
    private readonly system: ActorSystem,
    private answer: Answer,
  ) {}

  /** Scripts the next answers. */
  script(answer: Answer): void {
    const base = this.attempts.length;
    this.answer = (n) => answer(n - base);
  }

  post(pid: PID, entry: Entry): boolean {
    this.reply(pid, entrySender(entry));
    return true;
  }

  sendSystemMessage(): void {}

  stop(): void {}

  /** Resolves once it got `n` attempts. */
  until(n: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = () => {
        if (this.attempts.length < n) return;
        this.waiter = undefined;
        resolve();
      };
      this.waiter();
    });
  }

  private reply(pid: PID, sender: PID | undefined): void {
    this.attempts.push(pid.id);
    this.waiter?.();
    const answer = this.answer(this.attempts.length);
    if (answer !== undefined && sender !== undefined) this.system.root.send(sender, answer);
  }
}

const member = (id: string, kinds = ['k']): Member => ({
  id,
  address: `${id}:1`,
  kinds,
  incarnation: 1,
  status: 'up',
});

describe('GrainCaller', () => {
  let system: ActorSystem;
  let topology: Topology;
  let caller: GrainCaller;
  let a: FakeMember;
  let b: FakeMember;
  /** Waits between attempts the caller scheduled, in ms. */
  let sleeps: number[];
  let slept: (() => void) | undefined;
  let selfFenced: boolean;

  beforeEach(() => {
    system = new ActorSystem({ name: 'caller' });
    // Only member a hosts the kind: every grain's owner is a:1.
    topology = { version: 1, members: [member('a'), member('b', [])] };
    a = new FakeMember(system, () => 'answer');
    b = new FakeMember(system, () => 'from b');
    system.registry.addAddressResolver((pid) =>
      pid.address === 'a:1' ? a : pid.address === 'b:1' ? b : undefined,
    );
    sleeps = [];
    selfFenced = false;
    caller = makeCaller();
  });
  afterEach(() => system.shutdown());

  /** The caller under test, with overload options if given; `counters` are its counters. */
  let counters: OverloadCounters;
  const makeCaller = (overload?: OverloadOptions, random = () => 1 - Number.EPSILON): GrainCaller =>
    new GrainCaller({
      system,
      memberId: 'm1',
      overload: resolveOverloadOptions(overload),
      counters: (counters = new OverloadCounters()),
      defaultTimeoutMs: 2000,
      topology: () => topology,
      shardCountOf: () => 16,
      onSendFailed: () => {},
      stopped: () => false,
      membershipUnavailable: () => selfFenced,
      clock: {
        ...SYSTEM_CLOCK,
        setTimer: (fn, ms) => {
          sleeps.push(ms);
          slept?.();
          return SYSTEM_CLOCK.setTimer(fn, ms);
        },
      },
      // By default the longest jitter: waits between attempts are 1.5 x the backoff (150 ms at
      // most), and an owner's throttle never holds a call back (it draws below its odds).
      random,
    });

  const call = (options?: Parameters<GrainCaller['request']>[3]): Promise<unknown> =>
    caller.request('k', 'g-1', 'hello', options, undefined);

  it('sends the message to the grain’s PID at its owner and resolves with the reply', async () => {
    expect(await call()).to.equal('answer');
    expect(a.attempts).to.deep.equal(['$g/k/g-1']);
  });

  it('retries NotOwnerError, trying the owner it names at once', async () => {
    a.script(() => new NotOwnerError('k', 'g-1', 'b:1'));
    const started = Date.now();
    expect(await call()).to.equal('from b');
    expect(a.attempts).to.have.length(1);
    expect(b.attempts).to.deep.equal(['$g/k/g-1']);
    // No backoff before a named owner (the first backoff is 2.5-7.5 ms).
    expect(Date.now() - started).to.be.below(1000);
  });

  it('retries what provably did not reach the grain until the owner answers', async () => {
    a.script((n) =>
      n === 1
        ? new DeadLetterError('a:1/$g/k/g-1', 'not-found')
        : n === 2
          ? new EndpointUnavailableError('a:1')
          : n === 3
            ? new EndpointUnavailableError('a:1', 'left', { inFlight: true, peerLeft: true })
            : 'finally',
    );
    expect(await call()).to.equal('finally');
    expect(a.attempts).to.have.length(4);
  });

  it('never retries an error of grain code, even one carrying a retryable code', async () => {
    const thrown = new GrainError('k', 'g-1', 'DeadLetterError', 'ERR_DEAD_LETTER', 'inner');
    a.script(() => thrown);
    expect(await call().catch((e: unknown) => e)).to.equal(thrown);
    expect(a.attempts).to.have.length(1);
  });

  it('fails with CallOutcomeUnknownError when the connection broke after sending, unless idempotent', async () => {
    const broke = (n: number): unknown =>
      n === 1 ? new EndpointUnavailableError('a:1', 'gone', { inFlight: true }) : 'retried';
    a.script(broke);
    const err = await call().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CallOutcomeUnknownError).with.property('address', 'a:1');
    expect((err as Error).cause).to.be.instanceOf(EndpointUnavailableError);
    a.script(broke);
    expect(await call({ idempotent: true })).to.equal('retried');
  });

  it('counts re-sends after a full mailbox or an unknown outcome against retries', async () => {
    const full = new MailboxFullError('k/g-1', 3);
    a.script((n) => (n <= 2 ? full : 'room'));
    expect(await call().catch((e: unknown) => e)).to.equal(full);
    a.script((n) => (n <= 2 ? full : 'room'));
    expect(await call({ retries: 2 })).to.equal('room');
    a.script(() => new EndpointUnavailableError('a:1', 'gone', { inFlight: true }));
    const err = await call({ idempotent: true, retries: 1 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CallOutcomeUnknownError);
    expect(a.attempts.length).to.equal(1 + 3 + 2);
  });

  it('ends with DeadlineExceededError naming the attempts and the last error', async () => {
    a.script(() => new NotOwnerError('k', 'g-1', undefined));
    const err = (await call({ timeoutMs: 120 }).catch((e: unknown) => e)) as DeadlineExceededError;
    expect(err).to.be.instanceOf(DeadlineExceededError);
    expect(err.attempts).to.equal(a.attempts.length).and.be.above(1);
    expect(err.cause).to.be.instanceOf(NotOwnerError);
  });

  it('fails a first attempt that timed out with DeadlineExceededError at once, without stacks', async () => {
    a.script(() => undefined); // never answers
    const err = (await call({ timeoutMs: 50 }).catch((e: unknown) => e)) as DeadlineExceededError;
    expect(err).to.be.instanceOf(DeadlineExceededError);
    expect(err.attempts).to.equal(1);
    expect(a.attempts).to.have.length(1);
    expect(err.cause).to.be.instanceOf(TimeoutError);
    // Made once per expired call under overload: no capture, for the error or its cause.
    expect(err.stack).to.equal(`DeadlineExceededError: ${err.message}`);
    expect((err.cause as Error).stack).to.equal(`TimeoutError: ${(err.cause as Error).message}`);
    expect(counters.outstanding).to.equal(0);
  });

  it('wakes a call waiting between attempts when the topology changes', async () => {
    a.script(() => new NotOwnerError('k', 'g-1', undefined));
    const pending = call({ timeoutMs: 5000 });
    // Once the backoff reached 100 ms, the call sleeps 150 ms (the longest jitter).
    await new Promise<void>((resolve) => {
      slept = () => {
        if (sleeps.some((ms) => ms >= 149)) resolve();
      };
    });
    topology = { version: 2, members: [member('a', []), member('b')] };
    const woken = Date.now();
    caller.topologyChanged();
    expect(await pending).to.equal('from b');
    expect(Date.now() - woken).to.be.below(100);
  });

  describe('when no live member hosts the kind', () => {
    it('retries, then fails with NoHostError saying its hosts dropped out and this member is fenced', async () => {
      caller.topologyChanged(); // seen: a hosts k
      topology = { version: 2, members: [member('b', [])] }; // a's lease expired
      caller.topologyChanged();
      selfFenced = true;
      const err = (await call({ timeoutMs: 150 }).catch((e: unknown) => e)) as NoHostError;
      expect(err).to.be.instanceOf(NoHostError);
      expect(err).to.include({ kind: 'k', dropped: 1, leaving: 0, membershipUnavailable: true });
      expect(err.message).to.match(
        /no live member hosts kind 'k'.*1 member\(s\) that hosted it dropped out.*membership store looks unreachable/,
      );
      expect(sleeps.length, 'it retried').to.be.above(1);
    });

    it('succeeds when a host comes back within the deadline', async () => {
      caller.topologyChanged();
      topology = { version: 2, members: [member('b', [])] };
      caller.topologyChanged();
      const pending = call({ timeoutMs: 3000 });
      await new Promise((r) => setTimeout(r, 50));
      topology = { version: 3, members: [member('a'), member('b', [])] };
      caller.topologyChanged();
      expect(await pending).to.equal('answer');
    });

    it('fails with NoHostError, not NotOwnerError, when the owner answers that it is fenced', async () => {
      a.script(() => new MemberFencedError('k', 'g-1', 'a'));
      const err = (await call({ timeoutMs: 150 }).catch((e: unknown) => e)) as NoHostError;
      expect(err).to.be.instanceOf(NoHostError);
      expect(err.fencedAnswers).to.equal(a.attempts.length).and.be.above(1);
      expect(err.cause).to.be.instanceOf(MemberFencedError);
      expect(err.message).to.match(/answer\(s\) from fenced members/);
    });

    it('fails at once with UnknownKindError for a kind no member was ever seen hosting', async () => {
      caller.topologyChanged();
      const err = await caller
        .request('nope', 'g-1', 'hello', { timeoutMs: 5000 }, undefined)
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(UnknownKindError);
      expect(sleeps).to.deep.equal([]);
    });
  });

  describe('overload', () => {
    const overloaded = (): OverloadedError => OverloadedError.of('loadShedding', 'a', 'k', 'g-1');

    it('fails at once with OverloadedError beyond maxOutstandingCalls, and takes calls again as they settle', async () => {
      caller = makeCaller({ maxOutstandingCalls: 2 });
      a.script(() => undefined); // never answers: the calls stay outstanding until their deadline
      const first = [call({ timeoutMs: 100 }), call({ timeoutMs: 100 })].map((p) =>
        p.catch((e: unknown) => e),
      );
      const refused = await call().catch((e: unknown) => e);
      expect(refused)
        .to.be.instanceOf(OverloadedError)
        .with.property('limit', 'maxOutstandingCalls');
      expect((refused as Error).stack).to.not.include('grain-caller');
      expect(a.attempts).to.have.length(2);
      for (const e of await Promise.all(first)) expect(e).to.be.instanceOf(DeadlineExceededError);
      a.script(() => 'again');
      expect(await call()).to.equal('again');
    });

    it('retries after OverloadedError with a longer backoff, within the retry budget', async () => {
      a.script((n) => (n <= 2 ? overloaded() : 'room'));
      expect(await call()).to.equal('room');
      expect(a.attempts).to.have.length(3);
      expect(sleeps[0]).to.be.at.least(25);
      expect(sleeps[1]).to.be.above(sleeps[0]!);
      expect(caller.budget.spent).to.equal(2);
    });

    it('does not retry when the deadline leaves no time for the backoff and another attempt', async () => {
      a.script(() => overloaded());
      const err = await call({ timeoutMs: 30 }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OverloadedError);
      expect(a.attempts).to.have.length(1);
      expect(sleeps).to.deep.equal([]);
    });

    it('spends no more retries than the budget allows, and counts the refusals', async () => {
      // No ratio, 0.1 retries/s over 10 s: one retry in the window for the whole member.
      caller = makeCaller({ retryBudget: { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 } });
      a.script(() => overloaded());
      expect(await call().catch((e: unknown) => e)).to.be.instanceOf(OverloadedError);
      expect(a.attempts).to.have.length(2);
      expect(await call().catch((e: unknown) => e)).to.be.instanceOf(OverloadedError);
      expect(a.attempts).to.have.length(3);
      expect(caller.budget.spent).to.equal(1);
      expect(caller.budget.refused).to.equal(2);
    });

    it('sends a call held back from an owner that sheds load through the retry loop, or fails it at once without budget', async () => {
      // A first draw of 0: the throttle holds the call back (its odds are > 0); then the longest
      // draws: the retry's jitter, and the throttle lets the retry through.
      const draws = [0];
      caller = makeCaller(undefined, () => draws.shift() ?? 1 - Number.EPSILON);
      a.script((n) => (n === 1 ? overloaded() : 'served'));
      // The owner refuses for its load: the throttle arms (the call itself may not retry).
      expect(await call({ retries: 0 }).catch((e: unknown) => e)).to.be.instanceOf(OverloadedError);
      // The next call is held back here (1 request, no accept yet: odds 1/2), then retried after
      // a backoff, and served.
      expect(await call()).to.equal('served');
      expect(counters.heldBack).to.equal(1);
      expect(a.attempts).to.have.length(2);
      expect(sleeps[0]).to.be.at.least(12.5);
      expect(caller.budget.spent).to.equal(1);

      caller = makeCaller({ retryBudget: { ratio: 0, minPerSecond: 0 } }, () => 0);
      a.script(() => overloaded());
      await call({ retries: 0 }).catch(() => undefined);
      const held = await call().catch((e: unknown) => e);
      expect(held).to.be.instanceOf(OverloadedError).with.property('limit', 'loadShedding');
      expect((held as Error).message).to.contain('holds calls to it back');
      expect(a.attempts).to.have.length(3); // the held call never reached the owner
      expect(counters.outstanding).to.equal(0);
    });

    it('holds a retry back too while the owner sheds load, without sending it', async () => {
      // Draws of 0: the shortest jitter, and the throttle holds back whenever its odds are > 0.
      caller = makeCaller(undefined, () => 0);
      a.script(() => overloaded());
      const err = await call({ retries: 2 }).catch((e: unknown) => e);
      // The first attempt reached the owner and armed the throttle; both retries were held here.
      expect(err).to.be.instanceOf(OverloadedError).with.property('limit', 'loadShedding');
      expect((err as Error).message).to.contain('holds calls to it back');
      expect(a.attempts).to.have.length(1);
      expect(counters.heldBack).to.equal(2);
      expect(caller.budget.spent).to.equal(2);
      expect(counters.outstanding).to.equal(0);
    });

    it('counts re-sends after OverloadedError against a call’s retries', async () => {
      a.script(() => overloaded());
      expect(await call({ retries: 0 }).catch((e: unknown) => e)).to.be.instanceOf(OverloadedError);
      expect(a.attempts).to.have.length(1);
    });
  });

  it('rejects bad arguments naming them', async () => {
    for (const [options, option] of [
      [{ retries: -1 }, 'options.retries'],
      [{ retries: 1.5 }, 'options.retries'],
      [{ timeoutMs: 0 }, 'options.timeoutMs'],
      [{ timeoutMs: '100' as unknown as number }, 'options.timeoutMs'],
      [{ timeoutMs: NaN }, 'options.timeoutMs'],
      [{ idempotent: 'yes' as unknown as boolean }, 'options.idempotent'],
    ] as const) {
      const err = await call(options).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(InvalidArgumentError).with.property('argument', option);
    }
    expect(a.attempts).to.deep.equal([]);
  });
});
