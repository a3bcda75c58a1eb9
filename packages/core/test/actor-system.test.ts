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
  PID,
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

  describe('idle actors', () => {
    it('hold no timer and sit on no queue once their messages are processed', async () => {
      const pids = Array.from({ length: 100 }, () =>
        system.root.spawn(
          Props.fromFunc((ctx) => {
            if (ctx.message === 'ping') ctx.respond('pong');
          }),
        ),
      );
      await Promise.all(pids.map((p) => system.root.request(p, 'ping')));
      await new Promise((r) => setImmediate(r));
      expect(system.dispatcher.readyCount).to.equal(0);
      expect(system.timers.size).to.equal(0);
      expect(system.registry.size).to.equal(100); // the actors only: no future left behind
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

    it('rejects pending requests with SystemShutdownError', async () => {
      // A resolver that accepts and never answers, like a slow remote node.
      const blackHole = { post: () => true, sendSystemMessage() {}, stop() {} };
      system.registry.addAddressResolver(() => blackHole);
      const pending = system.root.request(new PID('10.0.0.1:4000', 'x'), 'q').catch((e) => e);
      await system.shutdown();
      expect(await pending).to.be.instanceOf(SystemShutdownError);
    });

    it('gives up on an actor stuck in an await after shutdownTimeoutMs, and logs it', async () => {
      const errors: unknown[] = [];
      const logger = {
        debug: () => {},
        info: () => {},
        warn: () => {},
        error: (o: unknown) => errors.push(o),
        child: () => logger,
      };
      const s = new ActorSystem({ logger, shutdownTimeoutMs: 50 });
      let hanging!: () => void;
      const isHanging = new Promise<void>((r) => (hanging = r));
      const stuck = s.root.spawnNamed(
        Props.fromFunc(async (ctx) => {
          if (ctx.message !== 'hang') return;
          hanging();
          await new Promise(() => {});
        }),
        'stuck',
      );
      s.root.send(stuck, 'hang');
      await isHanging;
      await s.shutdown();
      expect(JSON.stringify(errors)).to.contain('stuck');
    });
  });
});
