import { expect } from 'chai';
import {
  AbortError,
  DeadLetterError,
  DeadLetterEvent,
  PID,
  Props,
  TimeoutError,
  type ActorSystem,
  type Context,
} from '@granary/core';
import type { ReplySink } from '../src/internal';
import { testSystem } from './support';

/** Answers with what the current request's deadline looked like from inside the actor. */
const deadlineEcho = Props.fromFunc((ctx: Context) => {
  if (ctx.sender !== undefined) ctx.respond({ deadline: ctx.deadline ?? null });
});

/** A sink that records its one outcome. */
function recordingSink(): ReplySink & { outcomes: Array<[unknown, Error | undefined]> } {
  const outcomes: Array<[unknown, Error | undefined]> = [];
  return { outcomes, settle: (reply, error) => outcomes.push([reply, error]) };
}

describe('request deadlines and ReplySink requests', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem({ timers: { tickMs: 5 } });
  });
  afterEach(() => system.shutdown());

  it('a request with timeoutMs shows its deadline (epoch ms) as ctx.deadline', async () => {
    const pid = system.root.spawn(deadlineEcho);
    const before = Date.now();
    const { deadline } = await system.root.request<{ deadline: number }>(pid, 'q', {
      timeoutMs: 2_000,
    });
    expect(deadline).to.be.within(before + 2_000, Date.now() + 2_000);
  });

  it('a request without a timeout, and a plain send, have no deadline', async () => {
    const pid = system.root.spawn(deadlineEcho);
    expect(await system.root.request(pid, 'q')).to.deep.equal({ deadline: null });
    let seen: unknown = 'unset';
    const probe = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message === 'tell') seen = ctx.deadline;
        else ctx.respond('flushed');
      }),
    );
    system.root.send(probe, 'tell');
    await system.root.request(probe, 'flush');
    expect(seen).to.equal(undefined);
  });

  it('forward keeps the deadline along with the sender', async () => {
    const last = system.root.spawn(deadlineEcho);
    const middle = system.root.spawn(Props.fromFunc((ctx) => ctx.forward(last)));
    const before = Date.now();
    const { deadline } = await system.root.request<{ deadline: number }>(middle, 'q', {
      timeoutMs: 3_000,
    });
    expect(deadline).to.be.within(before + 3_000, Date.now() + 3_000);
  });

  describe('root.requestTo', () => {
    it('hands the reply to the sink once, and unregisters the future', async () => {
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.sender !== undefined) ctx.respond({ got: ctx.message });
        }),
      );
      const sink = recordingSink();
      const size = system.registry.size;
      system.root.requestTo(pid, 'hi', sink, { timeoutMs: 1_000 });
      await system.root.request(pid, 'flush');
      expect(sink.outcomes).to.deep.equal([[{ got: 'hi' }, undefined]]);
      expect(system.registry.size).to.equal(size);
    });

    it('passes an Error reply as the error, with no reply', async () => {
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          ctx.respond(ctx.message === 'boom' ? new RangeError('bad') : 'flushed');
        }),
      );
      const sink = recordingSink();
      system.root.requestTo(pid, 'boom', sink);
      await system.root.request(pid, 'flush');
      expect(sink.outcomes).to.have.length(1);
      expect(sink.outcomes[0]![0]).to.equal(undefined);
      expect(sink.outcomes[0]![1]).to.be.instanceOf(RangeError);
    });

    it('passes a dead letter (no such actor) as DeadLetterError, with no reply', async () => {
      const sink = recordingSink();
      system.root.requestTo(new PID(system.address, 'nobody'), 'q', sink);
      await new Promise((r) => setImmediate(r));
      expect(sink.outcomes).to.have.length(1);
      expect(sink.outcomes[0]![0]).to.equal(undefined);
      expect(sink.outcomes[0]![1]).to.be.instanceOf(DeadLetterError);
    });

    it('times out with TimeoutError, and a late reply does not reach the sink again', async () => {
      let hold: Context | undefined;
      let late: PID | undefined;
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'hold') {
            hold = ctx;
            late = ctx.sender;
          }
        }),
      );
      const sink = recordingSink();
      system.root.requestTo(pid, 'hold', sink, { timeoutMs: 20 });
      await new Promise((r) => setTimeout(r, 80));
      expect(hold).to.not.equal(undefined);
      system.root.send(late!, 'too late');
      await new Promise((r) => setTimeout(r, 10));
      expect(sink.outcomes).to.have.length(1);
      expect(sink.outcomes[0]![0]).to.equal(undefined);
      expect(sink.outcomes[0]![1]).to.be.instanceOf(TimeoutError);
    });

    it('a sink that throws is logged; the responder goes on', async () => {
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message !== 'q') return;
          ctx.respond('first');
          ctx.respond('second'); // still runs: the sink's exception did not escape into the turn
        }),
      );
      const sink: ReplySink = {
        settle: () => {
          throw new Error('sink bug');
        },
      };
      system.root.requestTo(pid, 'q', sink);
      const late = await new Promise<unknown>((resolve) => {
        system.eventStream.subscribe(DeadLetterEvent, (e) => resolve(e.message));
      });
      expect(late).to.equal('second');
    });

    it('an aborted signal settles the sink with AbortError before anything is sent', () => {
      let received = 0;
      const pid = system.root.spawn(Props.fromFunc(() => void received++));
      const sink = recordingSink();
      const ac = new AbortController();
      ac.abort();
      system.root.requestTo(pid, 'q', sink, { signal: ac.signal });
      expect(sink.outcomes).to.have.length(1);
      expect(sink.outcomes[0]![1]).to.be.instanceOf(AbortError);
      expect(received).to.equal(0);
    });
  });
});
