import { expect } from 'chai';
import {
  Props,
  type ReceiveMiddleware,
  type SenderMiddleware,
  type ActorSystem,
} from '../src/index';
import { deferred, testSystem } from './support';

describe('middleware', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem();
  });
  afterEach(() => system.shutdown());

  it('runs receive middleware in registration order around receive', async () => {
    const log: string[] = [];
    const mw =
      (name: string): ReceiveMiddleware =>
      (next) =>
      (ctx) => {
        if (ctx.message !== 'hi') return next(ctx);
        log.push(`${name} before`);
        const r = next(ctx);
        log.push(`${name} after`);
        return r;
      };
    const pid = system.root.spawn(
      Props.fromFunc(
        (ctx) => {
          if (ctx.message === 'hi') {
            log.push('receive');
            ctx.respond('ok');
          }
        },
        { receiveMiddleware: [mw('a'), mw('b')] },
      ),
    );
    await system.root.request(pid, 'hi');
    expect(log).to.deep.equal(['a before', 'b before', 'receive', 'b after', 'a after']);
  });

  it('runs sender middleware in registration order on every outgoing send', async () => {
    const log: string[] = [];
    const got = deferred<Record<string, string>>();
    const stamp =
      (name: string): SenderMiddleware =>
      (next) =>
      (ctx, target, envelope) => {
        log.push(name);
        next(ctx, target, { ...envelope, header: { ...envelope.header, [name]: '1' } });
      };
    const sink = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message === 'x') got.resolve({ ...ctx.headers });
      }),
    );
    const sender = system.root.spawn(
      Props.fromFunc(
        (ctx) => {
          if (ctx.message === 'go') ctx.send(sink, 'x');
        },
        { senderMiddleware: [stamp('first'), stamp('second')] },
      ),
    );
    system.root.send(sender, 'go');
    expect(await got.promise).to.deep.equal({ first: '1', second: '1' });
    expect(log).to.deep.equal(['first', 'second']);
  });

  it('runs sender middleware on a respond to a request (the reply goes to the future)', async () => {
    const targets: string[] = [];
    const upper: SenderMiddleware = (next) => (ctx, target, envelope) => {
      targets.push(target.id);
      next(ctx, target, { ...envelope, message: String(envelope.message).toUpperCase() });
    };
    const pid = system.root.spawn(
      Props.fromFunc(
        (ctx) => {
          if (ctx.message === 'hi') ctx.respond('ok');
        },
        { senderMiddleware: [upper] },
      ),
    );
    expect(await system.root.request(pid, 'hi')).to.equal('OK');
    expect(targets).to.have.length(1);
    expect(targets[0]).to.match(/^f\$[\w-]{10}$/);
  });

  it('lets a sender middleware see trySend refusals', async () => {
    const gate = deferred();
    const full = system.root.spawn(
      Props.fromFunc(
        async (ctx) => {
          if (ctx.message === 'block') await gate.promise;
        },
        { mailbox: { capacity: 1 } },
      ),
    );
    system.root.send(full, 'block');
    system.root.send(full, 'fill');
    const pass: SenderMiddleware = (next) => (ctx, t, e) => next(ctx, t, e);
    const sender = system.root.spawn(
      Props.fromFunc(
        (ctx) => {
          if (ctx.message === 'try') ctx.respond(ctx.trySend(full, 'more'));
        },
        { senderMiddleware: [pass] },
      ),
    );
    expect(await system.root.request(sender, 'try')).to.equal(false);
    gate.resolve();
  });
});
