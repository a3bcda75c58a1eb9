import { expect } from 'chai';
import * as protobuf from 'protobufjs';
import { DeadLetterEvent } from '../../src/dead-letters';
import {
  AbortError,
  DeadLetterError,
  InvalidOptionError,
  MailboxFullError,
  MessageTooLargeError,
  NameExistsError,
  TimeoutError,
  UnknownKindError,
  UnknownTypeError,
} from '../../src/errors';
import type { Context } from '../../src/context';
import { Terminated } from '../../src/messages';
import { ActorSystem } from '../../src/actor-system';
import { silentLogger } from '../../src/logger';
import { PID } from '../../src/pid';
import { Remote } from '../../src/remote/remote';
import { Props } from '../../src/props';
import { SerializationRegistry } from '../../src/serialization/serialization-registry';
import type { TestNode } from './helpers';
import { nextEvent, rejectionOf, startNode, stopNodes } from './helpers';

const echo = Props.fromFunc((ctx: Context) => {
  if (typeof ctx.message === 'object' && ctx.message !== null && 'fail' in ctx.message) {
    class InsufficientFunds extends Error {
      override readonly name = 'InsufficientFunds';
      readonly code = 'ERR_FUNDS';
    }
    ctx.respond(new InsufficientFunds(String((ctx.message as { fail: string }).fail)));
    return;
  }
  if (ctx.sender) ctx.respond({ echo: ctx.message, headers: ctx.headers });
});

describe('Remote', function () {
  this.timeout(20000);
  const nodes: TestNode[] = [];
  let a: TestNode;
  let b: TestNode;

  beforeEach(async () => {
    a = await startNode();
    b = await startNode();
    nodes.push(a, b);
  });
  afterEach(() => stopNodes(nodes));

  describe('start', () => {
    it("sets the system's address to the bound host:port", () => {
      expect(a.address).to.match(/^127\.0\.0\.1:\d+$/);
      expect(a.system.registry.address).to.equal(a.address);
      expect(a.address).to.not.equal(b.address);
    });
  });

  describe('start options', () => {
    it('advertises advertisedHost instead of the bound host, and peers reach it there', async () => {
      const c = await startNode({ host: '127.0.0.1', advertisedHost: 'localhost' });
      nodes.push(c);
      expect(c.address).to.match(/^localhost:\d+$/);
      c.system.root.spawnNamed(echo, 'echo');
      const reply = await a.system.root.request(new PID(c.address, 'echo'), 'via-localhost', {
        timeoutMs: 5000,
      });
      expect(reply).to.deep.equal({ echo: 'via-localhost', headers: {} });
    });

    it('rejects out-of-range options with InvalidOptionError naming the option', async () => {
      const system = new ActorSystem({ logger: silentLogger });
      try {
        for (const [options, option] of [
          [{ batchSize: 0 }, 'batchSize'],
          [{ maxMessageBytes: -1 }, 'maxMessageBytes'],
          [{ port: 70000 }, 'port'],
        ] as const) {
          const err = await rejectionOf(new Remote(system).start(options));
          expect(err).to.be.instanceOf(InvalidOptionError);
          expect((err as InvalidOptionError).option).to.equal(option);
        }
      } finally {
        await system.shutdown();
      }
    });
  });

  describe('request', () => {
    it('gets the reply of an actor on another node, with headers', async () => {
      const pid = b.system.root.spawnNamed(echo, 'echo');
      const reply = await a.system.root.request(
        new PID(b.address, pid.id),
        { n: 1 },
        { header: { trace: 't1' }, timeoutMs: 5000 },
      );
      expect(reply).to.deep.equal({ echo: { n: 1 }, headers: { trace: 't1' } });
    });

    it("carries the request's deadline as time left: the remote actor sees it as ctx.deadline", async () => {
      b.system.root.spawnNamed(
        Props.fromFunc((ctx: Context) => {
          if (ctx.sender) ctx.respond({ deadline: ctx.deadline ?? null });
        }),
        'deadline',
      );
      const target = new PID(b.address, 'deadline');
      const before = Date.now();
      const timed = await a.system.root.request<{ deadline: number }>(target, 'q', {
        timeoutMs: 4_000,
      });
      // Same clock in both systems here: exact up to the ms rounding and the time in flight.
      expect(timed.deadline).to.be.within(before + 4_000 - 5, Date.now() + 4_000 + 1);
      expect(await a.system.root.request(target, 'q')).to.deep.equal({ deadline: null });
    });

    it('rejects with the error the remote actor responded with: name, code and message kept', async () => {
      b.system.root.spawnNamed(echo, 'echo');
      const err = await rejectionOf(
        a.system.root.request(new PID(b.address, 'echo'), { fail: 'balance 3 < 5' }),
      );
      expect(err.name).to.equal('InsufficientFunds');
      expect((err as { code?: string }).code).to.equal('ERR_FUNDS');
      expect(err.message).to.equal('balance 3 < 5');
    });

    it('rejects with a Granary error the remote actor responded with as its class: is() holds', async () => {
      b.system.root.spawnNamed(
        Props.fromFunc((ctx: Context) => ctx.respond(new MailboxFullError('x/y', 3))),
        'full',
      );
      const err = await rejectionOf(a.system.root.request(new PID(b.address, 'full'), 'q'));
      expect(MailboxFullError.is(err)).to.equal(true);
      expect(err).to.be.instanceOf(MailboxFullError).and.include({ target: 'x/y', capacity: 3 });
    });

    it('times out like a local request when the remote actor never answers', async () => {
      b.system.root.spawnNamed(
        Props.fromFunc(() => undefined),
        'silent',
      );
      const err = await rejectionOf(
        a.system.root.request(new PID(b.address, 'silent'), 'x', { timeoutMs: 100 }),
      );
      expect(err).to.be.instanceOf(TimeoutError);
    });

    it('is cancelled by its signal like a local request', async () => {
      b.system.root.spawnNamed(
        Props.fromFunc(() => undefined),
        'silent',
      );
      const ac = new AbortController();
      const p = a.system.root.request(new PID(b.address, 'silent'), 'x', { signal: ac.signal });
      ac.abort();
      expect(await rejectionOf(p)).to.be.instanceOf(AbortError);
    });

    it('rejects with DeadLetterError for an unknown target, which is dead-lettered on the receiver', async () => {
      const dead = nextEvent(b.system, DeadLetterEvent);
      const err = await rejectionOf(
        a.system.root.request(new PID(b.address, 'nobody'), 'x', { timeoutMs: 5000 }),
      );
      expect(err).to.be.instanceOf(DeadLetterError);
      expect((err as DeadLetterError).code).to.equal('ERR_DEAD_LETTER');
      const event = await dead;
      expect(event.pid.id).to.equal('nobody');
      expect(event.reason).to.equal('not-found');
    });
  });

  describe('send', () => {
    it('delivers many messages in order, batched into few frames', async () => {
      const got: number[] = [];
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      b.system.root.spawnNamed(
        Props.fromFunc((ctx) => {
          if (typeof ctx.message === 'number') {
            got.push(ctx.message);
            if (got.length === 5000) done();
          }
        }),
        'sink',
      );
      const sink = new PID(b.address, 'sink');
      for (let i = 0; i < 5000; i++) a.system.root.send(sink, i);
      await all;
      expect(got).to.deep.equal([...Array(5000).keys()]);
    });

    it('forward keeps the original sender across the hop', async () => {
      b.system.root.spawnNamed(echo, 'echo');
      const relay = a.system.root.spawnNamed(
        Props.fromFunc((ctx) => {
          if (typeof ctx.message === 'string') ctx.forward(new PID(b.address, 'echo'));
        }),
        'relay',
      );
      // The request goes to a's relay, which forwards to b's echo; b replies straight to a's future.
      const reply = await b.system.root.request(new PID(a.address, relay.id), 'via-relay', {
        timeoutMs: 5000,
      });
      expect(reply).to.deep.equal({ echo: 'via-relay', headers: {} });
    });

    it('throws MessageTooLargeError at the sender for a message over maxMessageBytes', async () => {
      const small = await startNode({ maxMessageBytes: 1024 });
      nodes.push(small);
      const target = new PID(b.address, 'anything');
      let caught: unknown;
      try {
        small.system.root.send(target, new Uint8Array(2048));
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(MessageTooLargeError);
      expect((caught as Error).message).to.contain('maxMessageBytes');
      const err = await rejectionOf(small.system.root.request(target, new Uint8Array(2048)));
      expect(err).to.be.instanceOf(MessageTooLargeError);
      expect((err as MessageTooLargeError).size).to.equal(2048);
      // JSON is measured in UTF-8 bytes: 400 three-byte characters are 1,200+ bytes, not 400.
      const wide = await rejectionOf(small.system.root.request(target, { s: '✓'.repeat(400) }));
      expect(wide).to.be.instanceOf(MessageTooLargeError);
      expect((wide as MessageTooLargeError).size).to.equal(Buffer.byteLength('{"s":""}') + 1200);
    });
  });

  describe('serialization', () => {
    it('dead-letters an unknown type on the receiver and rejects a request with UnknownTypeError', async () => {
      const root = protobuf.parse(
        'syntax = "proto3"; package only.sender; message Secret { string s = 1; }',
      ).root;
      const Secret = root.lookupType('only.sender.Secret');
      b.system.root.spawnNamed(echo, 'echo');
      const dead = nextEvent(b.system, DeadLetterEvent);
      const err = await rejectionOf(
        a.system.root.request(new PID(b.address, 'echo'), Secret.create({ s: 'x' }), {
          timeoutMs: 5000,
        }),
      );
      expect(err).to.be.instanceOf(UnknownTypeError);
      expect(err.message).to.contain('only.sender.Secret');
      const event = await dead;
      expect(event.reason).to.equal('unknown-type');
      expect((event.message as { typeName: string }).typeName).to.equal('only.sender.Secret');
    });

    it('carries registered protobuf messages as their type', async () => {
      const serialization = new SerializationRegistry();
      const root = protobuf.parse(
        'syntax = "proto3"; package t.shared; message Add { int32 a = 1; int32 b = 2; }',
      ).root;
      serialization.registerRoot(root);
      const x = await startNode({ serialization });
      const y = await startNode({ serialization });
      nodes.push(x, y);
      y.system.root.spawnNamed(
        Props.fromFunc((ctx) => {
          const m = ctx.message as { a: number; b: number; $type?: protobuf.Type };
          ctx.respond({ sum: m.a + m.b, type: m.$type?.fullName });
        }),
        'adder',
      );
      const Add = root.lookupType('t.shared.Add');
      const reply = await x.system.root.request(
        new PID(y.address, 'adder'),
        Add.create({ a: 2, b: 3 }),
        { timeoutMs: 5000 },
      );
      expect(reply).to.deep.equal({ sum: 5, type: '.t.shared.Add' });
    });
  });

  describe('remote watch', () => {
    it('delivers Terminated (stopped) when a watched remote actor stops', async () => {
      const victim = b.system.root.spawnNamed(
        Props.fromFunc(() => undefined),
        'victim',
      );
      b.system.root.spawnNamed(echo, 'echo');
      const remoteVictim = new PID(b.address, victim.id);
      let resolve!: (t: Terminated) => void;
      const terminated = new Promise<Terminated>((r) => (resolve = r));
      const watcher = a.system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message instanceof Terminated) resolve(ctx.message);
          else if (ctx.message === 'watch') {
            ctx.watch(remoteVictim);
            ctx.respond('ok');
          }
        }),
      );
      await a.system.root.request(watcher, 'watch', { timeoutMs: 5000 });
      // Same stream, so once this round trip is back the Watch reached the victim's mailbox.
      await a.system.root.request(new PID(b.address, 'echo'), 'sync', { timeoutMs: 5000 });
      b.system.root.stop(victim);
      const t = await terminated;
      expect(t.who.equals(remoteVictim)).to.equal(true);
      expect(t.why).to.equal('stopped');
    });

    it('delivers Terminated (not-found) when the watched remote actor does not exist', async () => {
      const ghost = new PID(b.address, 'ghost');
      let resolve!: (t: Terminated) => void;
      const terminated = new Promise<Terminated>((r) => (resolve = r));
      const watcher = a.system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.message instanceof Terminated) resolve(ctx.message);
          else if (ctx.message === 'watch') ctx.watch(ghost);
        }),
      );
      a.system.root.send(watcher, 'watch');
      const t = await terminated;
      expect(t.who.equals(ghost)).to.equal(true);
      expect(t.why).to.equal('not-found');
    });
  });

  describe('stop and poison', () => {
    for (const how of ['stop', 'poison'] as const) {
      it(`${how} of a remote PID stops the actor on its node`, async () => {
        const victim = b.system.root.spawnNamed(
          Props.fromFunc(() => undefined),
          'victim',
        );
        const terminated = b.system.root.watch(victim);
        const remoteVictim = new PID(b.address, victim.id);
        if (how === 'stop') a.system.root.stop(remoteVictim);
        else a.system.root.poison(remoteVictim);
        const t = await terminated;
        expect(t.why).to.equal('stopped');
        expect(b.system.registry.getLocal('victim')).to.equal(undefined);
      });
    }
  });

  describe('spawnNamed', () => {
    it('spawns a registered kind on another node and returns its PID', async () => {
      b.remote.registerKind('echo', echo);
      const pid = await a.remote.spawnNamed(b.address, 'echo', 'e1');
      expect(pid.address).to.equal(b.address);
      expect(pid.id).to.equal('e1');
      expect(await a.system.root.request(pid, 'hi', { timeoutMs: 5000 })).to.deep.equal({
        echo: 'hi',
        headers: {},
      });
    });

    it('rejects with UnknownKindError for a kind the target never registered', async () => {
      const err = await rejectionOf(a.remote.spawnNamed(b.address, 'nope', 'x'));
      expect(err).to.be.instanceOf(UnknownKindError);
      expect(err.message).to.contain("'nope'");
    });

    it('rejects with NameExistsError for a taken name', async () => {
      b.remote.registerKind('echo', echo);
      await a.remote.spawnNamed(b.address, 'echo', 'e1');
      expect(await rejectionOf(a.remote.spawnNamed(b.address, 'echo', 'e1'))).to.be.instanceOf(
        NameExistsError,
      );
    });
  });
});
