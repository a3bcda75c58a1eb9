import { expect } from 'chai';
import {
  ActorSystem,
  DeadLetterError,
  NameExistsError,
  Props,
  Started,
  Stopped,
  Stopping,
  SystemShutdownError,
  Terminated,
  silentLogger,
} from '../src/index';

describe('ActorSystem', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ logger: silentLogger });
  });
  afterEach(() => system.shutdown());

  describe('root', () => {
    it('spawns an actor that answers a request', async () => {
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (typeof ctx.message === 'number') ctx.respond(ctx.message + 1);
        }),
      );
      expect(await system.root.request(pid, 41)).to.equal(42);
      expect(pid.address).to.equal('nonhost');
    });

    it('delivers Started first', async () => {
      const seen: unknown[] = [];
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          seen.push(ctx.message);
          if (ctx.message === 'get') ctx.respond(seen.length);
        }),
      );
      await system.root.request(pid, 'get');
      expect(seen[0]).to.be.instanceOf(Started);
    });

    it('throws NameExistsError for a taken name', () => {
      const props = Props.fromFunc(() => {});
      system.root.spawnNamed(props, 'one');
      expect(() => system.root.spawnNamed(props, 'one')).to.throw(NameExistsError);
    });

    it('rejects a request to a missing actor at once with DeadLetterError', async () => {
      const pid = system.root.spawn(Props.fromFunc(() => {}));
      const t = system.root.watch(pid);
      system.root.stop(pid);
      expect((await t).why).to.equal('stopped');
      const err = await system.root.request(pid, 'x').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(DeadLetterError);
    });
  });

  describe('shutdown', () => {
    it('stops children before parents, running their stop handlers', async () => {
      const events: string[] = [];
      const child = Props.fromFunc((ctx) => {
        if (ctx.message instanceof Stopped) events.push('child stopped');
      });
      const parent = Props.fromFunc((ctx) => {
        if (ctx.message instanceof Started) ctx.spawn(child);
        if (ctx.message === 'ready?') ctx.respond(ctx.children.length);
        if (ctx.message instanceof Stopping) events.push('parent stopping');
        if (ctx.message instanceof Stopped) events.push('parent stopped');
      });
      const pid = system.root.spawn(parent);
      expect(await system.root.request(pid, 'ready?')).to.equal(1);
      const terminated = system.root.watch(pid);
      await system.shutdown();
      expect(events).to.deep.equal(['parent stopping', 'child stopped', 'parent stopped']);
      expect(await terminated).to.be.instanceOf(Terminated);
      expect(() => system.root.spawn(child)).to.throw(SystemShutdownError);
    });
  });
});
