import { expect } from 'chai';
import {
  DeadLetterEvent,
  NameExistsError,
  Props,
  Started,
  Stopping,
  Terminated,
  type ActorSystem,
  type Context,
  type PID,
} from '../src/index';
import { deferred, testSystem } from './support';

describe('ActorContext', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem();
  });
  afterEach(() => system.shutdown());

  describe('respond and forward', () => {
    it('forward keeps the original sender and headers', async () => {
      const target = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'q') ctx.respond(`from target, trace=${ctx.headers.trace}`);
        }),
      );
      const relay = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'q') ctx.forward(target);
        }),
      );
      const reply = await system.root.request(relay, 'q', { header: { trace: 't1' } });
      expect(reply).to.equal('from target, trace=t1');
    });

    it('dead-letters a respond without a sender', async () => {
      const event = deferred<DeadLetterEvent>();
      system.eventStream.subscribe(DeadLetterEvent, (e) => event.resolve(e));
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'tell') ctx.respond('nobody to answer');
        }),
      );
      system.root.send(pid, 'tell');
      expect((await event.promise).reason).to.equal('no-sender');
    });

    it('passes the sender option of send to the target', async () => {
      const got = deferred<unknown>();
      const replyTo = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'answer') got.resolve(ctx.message);
        }),
      );
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'question') ctx.respond('answer');
        }),
      );
      system.root.send(pid, 'question', { sender: replyTo });
      expect(await got.promise).to.equal('answer');
    });
  });

  describe('spawn', () => {
    it('names children under their parent and lists them', async () => {
      const parent = system.root.spawnNamed(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'spawn')
            ctx.respond(
              ctx.spawnNamed(
                Props.fromFunc(() => {}),
                'kid',
              ),
            );
          if (ctx.message === 'children') ctx.respond(ctx.children.map((c) => c.id));
          if (ctx.message === 'again') {
            try {
              ctx.spawnNamed(
                Props.fromFunc(() => {}),
                'kid',
              );
            } catch (e) {
              ctx.respond(e);
            }
          }
        }),
        'parent',
      );
      const child = await system.root.request<PID>(parent, 'spawn');
      expect(child.id).to.equal('parent/kid');
      expect(await system.root.request(parent, 'children')).to.deep.equal(['parent/kid']);
      const err = await system.root.request(parent, 'again').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NameExistsError);
    });
  });

  describe('stop and poison', () => {
    /** An actor that records numbers and Stopping; blocked until `gate` opens. */
    function recorder(log: unknown[], gate: Promise<void>) {
      return Props.fromFunc(async (ctx) => {
        if (ctx.message === 'block') await gate;
        else if (typeof ctx.message === 'number') log.push(ctx.message);
        else if (ctx.message instanceof Stopping) log.push('stopping');
      });
    }

    it('stop takes effect after the current message, ahead of queued ones', async () => {
      const log: unknown[] = [];
      const gate = deferred();
      const pid = system.root.spawn(recorder(log, gate.promise));
      system.root.send(pid, 'block');
      for (let i = 1; i <= 3; i++) system.root.send(pid, i);
      system.root.stop(pid);
      const terminated = system.root.watch(pid);
      gate.resolve();
      expect((await terminated).why).to.equal('stopped');
      expect(log).to.deep.equal(['stopping']);
    });

    it('poison takes effect after the messages queued before it', async () => {
      const log: unknown[] = [];
      const gate = deferred();
      const pid = system.root.spawn(recorder(log, gate.promise));
      system.root.send(pid, 'block');
      for (let i = 1; i <= 3; i++) system.root.send(pid, i);
      system.root.poison(pid);
      system.root.send(pid, 4);
      const terminated = system.root.watch(pid);
      gate.resolve();
      await terminated;
      expect(log).to.deep.equal([1, 2, 3, 'stopping']);
    });
  });

  describe('watch', () => {
    it('delivers Terminated { who, why } to a watching actor, and nothing after unwatch', async () => {
      const seen: Terminated[] = [];
      const got = deferred();
      const a = system.root.spawn(Props.fromFunc(() => {}));
      const b = system.root.spawn(Props.fromFunc(() => {}));
      const watcher = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message instanceof Started) {
            ctx.watch(a);
            ctx.watch(b);
            ctx.unwatch(b);
          }
          if (ctx.message === 'ready?') ctx.respond(true);
          if (ctx.message instanceof Terminated) {
            seen.push(ctx.message);
            got.resolve();
          }
        }),
      );
      await system.root.request(watcher, 'ready?');
      system.root.stop(b);
      await system.root.watch(b);
      system.root.stop(a);
      await got.promise;
      expect(seen).to.have.length(1);
      expect(seen[0]!.who.equals(a)).to.equal(true);
      expect(seen[0]!.why).to.equal('stopped');
    });

    it('answers a watch of a missing actor with why not-found', async () => {
      const pid = system.root.spawn(Props.fromFunc(() => {}));
      system.root.stop(pid);
      await system.root.watch(pid);
      const t = await system.root.watch(pid);
      expect(t.why).to.equal('not-found');
    });
  });

  describe('stash', () => {
    it('unstashAll puts stashed messages back first, in order', async () => {
      const log: unknown[] = [];
      const done = deferred();
      let open = false;
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          const m = ctx.message;
          if (m === 'open') {
            open = true;
            ctx.unstashAll();
          } else if (typeof m === 'number') {
            if (!open) ctx.stash();
            else log.push(m);
            if (log.length === 4) done.resolve();
          }
        }),
      );
      system.root.send(pid, 1);
      system.root.send(pid, 2);
      system.root.send(pid, 'open');
      system.root.send(pid, 3);
      system.root.send(pid, 4);
      await done.promise;
      expect(log).to.deep.equal([1, 2, 3, 4]);
    });
  });

  describe('become', () => {
    it('switches behavior and unbecome returns to the previous one', async () => {
      const angry = (ctx: Context): void => {
        if (ctx.message === 'hello') ctx.respond('go away');
        if (ctx.message === 'sorry') ctx.unbecome();
      };
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'hello') ctx.respond('hi');
          if (ctx.message === 'insult') ctx.become(angry);
        }),
      );
      expect(await system.root.request(pid, 'hello')).to.equal('hi');
      system.root.send(pid, 'insult');
      expect(await system.root.request(pid, 'hello')).to.equal('go away');
      system.root.send(pid, 'sorry');
      expect(await system.root.request(pid, 'hello')).to.equal('hi');
    });
  });

  describe('reenterAfter', () => {
    it('keeps the mailbox open and runs the callback as a turn with the original message', async () => {
      const slow = deferred<string>();
      const log: string[] = [];
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'slow') {
            ctx.reenterAfter(slow.promise, (value) => {
              log.push(`done ${value}`);
              ctx.respond(`slow answered with ${String(ctx.message)}`);
            });
          } else if (ctx.message === 'fast') {
            log.push('fast');
            ctx.respond('fast');
          }
        }),
      );
      const slowReply = system.root.request(pid, 'slow');
      expect(await system.root.request(pid, 'fast')).to.equal('fast');
      slow.resolve('x');
      expect(await slowReply).to.equal('slow answered with slow');
      expect(log).to.deep.equal(['fast', 'done x']);
    });

    it('passes a rejection to the callback as its error', async () => {
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message === 'go') {
            ctx.reenterAfter(Promise.reject(new Error('nope')), (_v, error) =>
              ctx.respond((error as Error).message),
            );
          }
        }),
      );
      expect(await system.root.request(pid, 'go')).to.equal('nope');
    });
  });
});
