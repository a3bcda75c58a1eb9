import { expect } from 'chai';
import {
  AllForOneStrategy,
  ExponentialBackoffStrategy,
  OneForOneStrategy,
  Props,
  Restarting,
  Started,
  type Terminated,
  type Actor,
  type ActorSystem,
  type Context,
  type Directive,
  type PID,
  type SupervisorStrategy,
} from '../src/index';
import { deferred, testSystem } from './support';

/** A child that fails on 'fail', counts instances, and reports what it saw. */
class Child implements Actor {
  static instances = 0;
  readonly instance = ++Child.instances;
  seen: unknown[] = [];
  receive(ctx: Context): void {
    const m = ctx.message;
    if (m instanceof Started) this.seen.push('started');
    else if (m instanceof Restarting) this.seen.push('restarting');
    else if (m === 'fail') throw new Error('child failed');
    else if (m === 'who') ctx.respond({ instance: this.instance, seen: this.seen });
    else if (typeof m === 'number') this.seen.push(m);
  }
}

/** A parent with `strategy` that spawns `n` Child actors and hands out their PIDs. */
function parentProps(strategy: SupervisorStrategy, n = 1): Props {
  return Props.fromFunc(
    (ctx) => {
      if (ctx.message instanceof Started) {
        for (let i = 0; i < n; i++) ctx.spawn(Props.fromProducer(() => new Child()));
      }
      if (ctx.message === 'children') ctx.respond(ctx.children);
    },
    { supervisor: strategy },
  );
}

describe('supervision', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem({ timers: { tickMs: 5 } });
  });
  afterEach(() => system.shutdown());

  async function childrenOf(strategy: SupervisorStrategy, n = 1): Promise<PID[]> {
    const parent = system.root.spawn(parentProps(strategy, n));
    return system.root.request<PID[]>(parent, 'children');
  }

  const who = (pid: PID) =>
    system.root.request<{ instance: number; seen: unknown[] }>(pid, 'who', { timeoutMs: 5000 });

  describe('OneForOneStrategy', () => {
    it('restarts with a fresh instance, Restarting then Started, keeping the mailbox', async () => {
      const [child] = await childrenOf(new OneForOneStrategy());
      const before = (await who(child!)).instance;
      system.root.send(child!, 'fail');
      // Queued behind the failure: they must survive the restart, in order.
      for (let i = 1; i <= 3; i++) system.root.send(child!, i);
      const after = await who(child!);
      expect(after.instance).to.not.equal(before);
      expect(after.seen).to.deep.equal(['started', 1, 2, 3]);
    });

    it('delivers Restarting to the failed instance', async () => {
      const seenByOld: unknown[][] = [];
      const props = Props.fromProducer(() => {
        const seen: unknown[] = [];
        seenByOld.push(seen);
        return {
          receive(ctx: Context) {
            if (ctx.message instanceof Restarting) seen.push('restarting');
            if (ctx.message === 'fail') throw new Error('x');
            if (ctx.message === 'ping') ctx.respond('pong');
          },
        };
      });
      const pid = system.root.spawn(props);
      system.root.send(pid, 'fail');
      await system.root.request(pid, 'ping');
      expect(seenByOld[0]).to.deep.equal(['restarting']);
      expect(seenByOld).to.have.length(2);
    });

    it('resumes the same instance on resume', async () => {
      const [child] = await childrenOf(new OneForOneStrategy({ decider: () => 'resume' }));
      const before = (await who(child!)).instance;
      system.root.send(child!, 'fail');
      system.root.send(child!, 7);
      const after = await who(child!);
      expect(after.instance).to.equal(before);
      expect(after.seen).to.deep.equal(['started', 7]);
    });

    it('stops the child on stop, and watchers see why failed', async () => {
      const [child] = await childrenOf(new OneForOneStrategy({ decider: () => 'stop' }));
      const terminated = system.root.watch(child!);
      system.root.send(child!, 'fail');
      expect((await terminated).why).to.equal('failed');
    });

    it('stops the child after maxRetries failures within the window', async () => {
      const [child] = await childrenOf(new OneForOneStrategy({ maxRetries: 2, withinMs: 60_000 }));
      const terminated = system.root.watch(child!);
      for (let i = 0; i < 3; i++) system.root.send(child!, 'fail');
      expect((await terminated).why).to.equal('failed');
    });

    it('escalates to the grandparent, which restarts the parent and its children', async () => {
      const decisions: Directive[] = [];
      const grand = Props.fromFunc(
        (ctx) => {
          if (ctx.message instanceof Started) {
            ctx.spawn(parentProps(new OneForOneStrategy({ decider: () => 'escalate' })));
          }
          if (ctx.message === 'parent') ctx.respond(ctx.children[0]);
        },
        {
          supervisor: new OneForOneStrategy({
            decider: () => {
              decisions.push('restart');
              return 'restart';
            },
          }),
        },
      );
      const g = system.root.spawn(grand);
      const parent = await system.root.request<PID>(g, 'parent');
      const [child] = await system.root.request<PID[]>(parent, 'children');
      const childGone = system.root.watch(child!);
      system.root.send(child!, 'fail');
      await childGone; // the parent's restart stops its children
      const [newChild] = await system.root.request<PID[]>(parent, 'children');
      expect(newChild!.equals(child)).to.equal(false);
      expect(decisions).to.deep.equal(['restart']);
    });
  });

  describe('AllForOneStrategy', () => {
    it('restarts every child when one fails', async () => {
      const kids = await childrenOf(new AllForOneStrategy(), 3);
      const before = await Promise.all(kids.map((k) => who(k)));
      system.root.send(kids[1]!, 'fail');
      // Wait until the failed one restarted; the others restart in the same directive.
      const after1 = await who(kids[1]!);
      expect(after1.instance).to.not.equal(before[1]!.instance);
      const after = await Promise.all(kids.map((k) => who(k)));
      after.forEach((a, i) => expect(a.instance).to.not.equal(before[i]!.instance));
    });
  });

  describe('ExponentialBackoffStrategy', () => {
    it('doubles the delay per failure up to the cap', () => {
      const s = new ExponentialBackoffStrategy({ initialBackoffMs: 10, maxBackoffMs: 50 });
      expect([1, 2, 3, 4].map((n) => s.backoffFor(n))).to.deep.equal([10, 20, 40, 50]);
    });

    it('restarts after the backoff, keeping messages sent meanwhile', async () => {
      const [child] = await childrenOf(new ExponentialBackoffStrategy({ initialBackoffMs: 30 }));
      const start = Date.now();
      system.root.send(child!, 'fail');
      system.root.send(child!, 1);
      const after = await who(child!);
      expect(Date.now() - start).to.be.at.least(25);
      expect(after.seen).to.deep.equal(['started', 1]);
    });
  });

  describe('top-level actors', () => {
    it('are restarted by the default strategy', async () => {
      const pid = system.root.spawn(Props.fromProducer(() => new Child()));
      const before = (await who(pid)).instance;
      system.root.send(pid, 'fail');
      expect((await who(pid)).instance).to.not.equal(before);
    });

    it('are stopped when a failure escalates past the root', async () => {
      const s = testSystem({ supervisor: new OneForOneStrategy({ decider: () => 'escalate' }) });
      const pid = s.root.spawn(Props.fromProducer(() => new Child()));
      const t = s.root.watch(pid);
      s.root.send(pid, 'fail');
      const terminated: Terminated = await t;
      expect(terminated.why).to.equal('failed');
      await s.shutdown();
    });
  });

  it('fails an actor whose Started handler throws, and restarts it', async () => {
    let attempts = 0;
    const ready = deferred();
    system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message instanceof Started && ++attempts === 1) throw new Error('bad start');
        if (ctx.message instanceof Started) ready.resolve();
      }),
    );
    await ready.promise;
    expect(attempts).to.equal(2);
  });
});
