import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import { DeadlineExceededError } from '../../src/errors';
import type { GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import type { ClusterLogger } from '../../src/internal/logger';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

/**
 * A request whose turn returns undefined (`return ctx.reminders.set(...)`, an `async receive`
 * with no `return`) gets no reply: its caller waited out its deadline with nothing on the
 * member to say why (found by the new-user helper's device-twin app: every call of a handler
 * returning a set's promise ran to DeadlineExceededError). The owner now says so, once per kind.
 */
describe('a request answered with undefined', function () {
  this.timeout(20_000);
  const warned: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
  const logger: ClusterLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj, msg) => void warned.push({ obj: obj as Record<string, unknown>, msg }),
    error: () => undefined,
    child: () => logger,
  };
  let cluster: Cluster;
  const noReplyLines = () =>
    warned.filter((w) => /returned undefined to a request/.test(w.msg ?? ''));

  before(async () => {
    const grain = () => ({
      async receive(ctx: GrainContext) {
        const m = ctx.message as { op: string };
        if (m.op === 'value') return 'ok';
        if (m.op === 'null') return null;
        if (m.op === 'respond') ctx.respond('responded');
        if (m.op === 'timer') {
          ctx.timers.after(10, () => undefined);
          return 'scheduled';
        }
        await Promise.resolve();
        return undefined; // 'nothing': no reply
      },
    });
    cluster = await Cluster.start({
      name: 'no-reply',
      id: 'm',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 5000 }),
      kinds: [kind('quiet', grain, { shardCount: 1 }), kind('other', grain, { shardCount: 1 })],
      remote: { host: '127.0.0.1', port: 0 },
      logger,
    });
  });
  after(() => cluster.shutdown({ graceful: false }));

  it('answers a value, null or respond() with no warning; a send or a timer turn warns nothing', async () => {
    expect(await cluster.request('quiet', 'a', { op: 'value' })).to.equal('ok');
    expect(await cluster.request('quiet', 'a', { op: 'null' })).to.equal(null);
    expect(await cluster.request('quiet', 'a', { op: 'respond' })).to.equal('responded');
    expect(await cluster.request('quiet', 'a', { op: 'timer' })).to.equal('scheduled');
    warned.length = 0;
    cluster.send('quiet', 'a', { op: 'nothing' });
    cluster.send('quiet', 'b', { op: 'timer' });
    expect(await cluster.request('quiet', 'a', { op: 'value' })).to.equal('ok');
    await new Promise((r) => setTimeout(r, 50)); // the timer's turn has run
    expect(noReplyLines()).to.deep.equal([]);
  });

  it('logs a warning naming the grain when a request gets no reply, once per kind', async () => {
    warned.length = 0;
    const calls = [
      cluster.request('quiet', 'c', { op: 'nothing' }, { timeoutMs: 300 }),
      cluster.request('quiet', 'd', { op: 'nothing' }, { timeoutMs: 300 }),
      cluster.request('other', 'e', { op: 'nothing' }, { timeoutMs: 300 }),
    ];
    for (const call of calls) {
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(DeadlineExceededError.is(err), String(err)).to.equal(true);
    }
    expect(noReplyLines().map((w) => [w.obj['kind'], w.obj['message']])).to.deep.equal([
      ['quiet', 'Object'],
      ['other', 'Object'],
    ]);
    expect(noReplyLines()[0]!.obj['grain']).to.equal('quiet/c');
  });
});
