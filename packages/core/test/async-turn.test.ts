import { expect } from 'chai';
import { Props, Restarting, Started, type ActorSystem } from '../src/index';
import { deferred, testSystem, ticks } from './support';

describe('async turns', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem();
  });
  afterEach(() => system.shutdown());

  it('takes no other user message until the returned promise settles', async () => {
    const log: string[] = [];
    const gate = deferred();
    const pid = system.root.spawn(
      Props.fromFunc(async (ctx) => {
        if (ctx.message === 'slow') {
          log.push('slow start');
          await gate.promise;
          log.push('slow end');
        } else if (ctx.message === 'next') {
          log.push('next');
          ctx.respond('ok');
        }
      }),
    );
    system.root.send(pid, 'slow');
    const next = system.root.request(pid, 'next');
    await ticks(5);
    expect(log).to.deep.equal(['slow start']);
    gate.resolve();
    await next;
    expect(log).to.deep.equal(['slow start', 'slow end', 'next']);
  });

  it('can respond after an await', async () => {
    const pid = system.root.spawn(
      Props.fromFunc(async (ctx) => {
        if (typeof ctx.message !== 'number') return;
        await new Promise((r) => setImmediate(r));
        ctx.respond(ctx.message * 10);
      }),
    );
    expect(await system.root.request(pid, 4)).to.equal(40);
  });

  it('treats a rejection as a failure for supervision (restart)', async () => {
    const lifecycle: string[] = [];
    const pid = system.root.spawn(
      Props.fromProducer(() => ({
        async receive(ctx) {
          if (ctx.message instanceof Started) lifecycle.push('started');
          if (ctx.message instanceof Restarting) lifecycle.push('restarting');
          if (ctx.message === 'fail') {
            await Promise.resolve();
            throw new Error('async boom');
          }
          if (ctx.message === 'ping') ctx.respond('pong');
        },
      })),
    );
    system.root.send(pid, 'fail');
    expect(await system.root.request(pid, 'ping')).to.equal('pong');
    expect(lifecycle).to.deep.equal(['started', 'restarting', 'started']);
  });

  it('holds a stop until the awaited turn settles', async () => {
    const log: string[] = [];
    const gate = deferred();
    const pid = system.root.spawn(
      Props.fromFunc(async (ctx) => {
        if (ctx.message === 'slow') {
          await gate.promise;
          log.push('slow end');
        }
      }),
    );
    system.root.send(pid, 'slow');
    await ticks(2);
    const terminated = system.root.watch(pid);
    system.root.stop(pid);
    await ticks(5);
    expect(log).to.deep.equal([]);
    gate.resolve();
    await terminated;
    expect(log).to.deep.equal(['slow end']);
  });
});
