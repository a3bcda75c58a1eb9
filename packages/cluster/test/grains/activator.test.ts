import { expect } from 'chai';
import { ActivationDeniedError, MemberFencedError, NotOwnerError } from '../../src/errors';
import { OverloadedError } from '../../src/overload/errors';
import type { DeactivationReason, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { shardOf } from '../../src/placement/shard-of';
import { OneKind } from './fixtures/one-kind';

/** A grain whose onDeactivate waits until the test lets it finish. */
class Slow {
  static releases: Array<() => void> = [];
  static live = 0;
  static maxLive = 0;
  private static waiting: Array<() => void> = [];

  /** Resolves once `n` onDeactivate calls wait for their release. */
  static until(n: number): Promise<void> {
    return new Promise((resolve) => {
      const w = (): void => {
        if (Slow.releases.length < n) return;
        Slow.waiting = Slow.waiting.filter((x) => x !== w);
        resolve();
      };
      Slow.waiting.push(w);
      w();
    });
  }

  onActivate(): void {
    Slow.maxLive = Math.max(Slow.maxLive, ++Slow.live);
  }
  receive(ctx: GrainContext): unknown {
    if (ctx.message === 'bye') ctx.deactivate();
    return ctx.activationId;
  }
  onDeactivate(): Promise<void> {
    const done = new Promise<void>((resolve) => Slow.releases.push(resolve));
    for (const w of [...Slow.waiting]) w();
    return done.then(() => {
      Slow.live--;
    });
  }
}

describe('Activator', () => {
  let host: OneKind;
  afterEach(() => host.stop());

  describe('activations', () => {
    beforeEach(() => {
      host = new OneKind(
        kind('k', () => ({ receive: (ctx: GrainContext) => ctx.activationId }), {
          canActivate: (id) => !id.startsWith('no-'),
          idleTimeoutMs: 50,
        }),
      );
    });

    it('keeps one activation per identity and logs its start and end', async () => {
      const ids = await Promise.all(Array.from({ length: 20 }, () => host.call('one', 'x')));
      expect(new Set(ids).size).to.equal(1);
      expect(host.events('activate')).to.have.length(1);
      expect(host.log[0]).to.include({ kind: 'k', identity: 'one', member: 'm1' });
    });

    it('starts none on a member that does not serve the shard: NotOwnerError with the owner', async () => {
      host.gate.serving = new Set();
      const err = await host.call('x', 1).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NotOwnerError).with.property('owner', 'owner-elsewhere:1');
      expect(host.activator.table.count).to.equal(0);
      expect(host.log).to.deep.equal([]);
    });

    it('answers MemberFencedError, not NotOwnerError, while the whole member is fenced', async () => {
      host.gate.serving = new Set();
      host.gate.fenced = true;
      const err = await host.call('x', 1).catch((e: unknown) => e);
      expect(err)
        .to.be.instanceOf(MemberFencedError)
        .and.include({ kind: host.def.name, identity: 'x' });
      expect((err as Error).message).to.match(/is fenced \(its lease is lost/);
      expect(host.activator.table.count).to.equal(0);
    });

    it('starts none for an identity canActivate refuses: ActivationDeniedError', async () => {
      const err = await host.call('no-1', 1).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ActivationDeniedError).with.property('identity', 'no-1');
      expect(host.activator.table.count).to.equal(0);
    });

    it('checks the shard gate once for a call to a live activation', async () => {
      await host.call('gate', 1);
      const before = host.gate.checks;
      await host.call('gate', 2);
      expect(host.gate.checks - before).to.equal(1);
    });

    it('answers a turn on a member fenced meanwhile with NotOwnerError and deactivates (not-owner)', async () => {
      await host.call('fenced', 1);
      host.gate.serving = new Set();
      const ended = host.until(() => host.events('deactivate').length === 1);
      const err = await host.call('fenced', 2).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NotOwnerError);
      await ended;
      expect(host.events('deactivate')[0]).to.include({ reason: 'not-owner' });
    });

    it('passivates an activation idle longer than idleTimeoutMs', async () => {
      const ended = host.until(() => host.events('deactivate').length === 1);
      await host.call('idle', 1);
      await ended;
      expect(host.events('deactivate')[0]).to.include({ identity: 'idle', reason: 'idle' });
      expect(host.activator.table.count).to.equal(0);
    });
  });

  describe('deactivation', () => {
    beforeEach(() => {
      Slow.releases = [];
      Slow.live = Slow.maxLive = 0;
      host = new OneKind(kind('slow', () => new Slow(), { mailbox: { capacity: 3 } }));
    });

    it('holds calls that arrive while an activation ends; they start the next one after onDeactivate', async () => {
      const first = await host.call('h', 'bye');
      await Slow.until(1);
      const held = [host.call('h', 'a'), host.call('h', 'b')];
      expect(host.activator.table.count).to.equal(1);
      Slow.releases[0]!();
      const [a, b] = await Promise.all(held);
      expect(a).to.equal(b).and.not.equal(first);
      expect(Slow.maxLive).to.equal(1);
      expect(host.events('activate')).to.have.length(2);
    });

    it('refuses held calls beyond the mailbox capacity with OverloadedError (mailbox.capacity)', async () => {
      await host.call('full', 'bye');
      await Slow.until(1);
      const calls = Array.from({ length: 4 }, () =>
        host.call('full', 'x').catch((e: unknown) => e),
      );
      const last = await calls[3];
      expect(last).to.be.instanceOf(OverloadedError).with.property('limit', 'mailbox.capacity');
      expect(last).to.have.property('identity', 'full');
      Slow.releases[0]!();
      await Promise.all(calls.slice(0, 3));
    });

    it('drains a shard: every activation of it ends (onDeactivate finished) before drain resolves', async () => {
      const shardCount = host.activator.shardCount;
      const ids = ['d-1', 'd-2', 'd-3', 'd-4', 'd-5', 'd-6'];
      await Promise.all(ids.map((id) => host.call(id, 'x')));
      const shard = shardOf('d-1', shardCount);
      const inShard = ids.filter((id) => shardOf(id, shardCount) === shard);
      let drained = false;
      const drain = Promise.resolve(host.activator.drain(shard, 'rebalance')).then(
        () => (drained = true),
      );
      await Slow.until(inShard.length);
      expect(drained).to.equal(false);
      for (const release of Slow.releases) release();
      await drain;
      const reasons = host.events('deactivate').map((e) => e.reason as DeactivationReason);
      expect(reasons).to.deep.equal(inShard.map(() => 'rebalance'));
      expect(host.activator.table.count).to.equal(ids.length - inShard.length);
    });
  });

  describe('overload', () => {
    /** Turns of 'hold' wait for the test; every turn is counted. */
    let gates: Array<() => void>;
    let turns: unknown[];

    beforeEach(() => {
      gates = [];
      turns = [];
      host = new OneKind(
        kind('o', () => ({
          receive: (ctx: GrainContext) => {
            turns.push(ctx.message);
            if (ctx.message !== 'hold') return 'done';
            return new Promise((resolve) => gates.push(() => resolve('held')));
          },
        })),
        4,
        // No probe: the shedding test sets the state itself.
        { maxPendingCalls: 3, loadShedding: { enabled: false } },
      );
    });

    const held = (n: number): Promise<void> =>
      new Promise((resolve) => {
        const poll = (): void => (gates.length >= n ? resolve() : void setTimeout(poll, 2));
        poll();
      });

    it('drops a call that expired in the mailbox before its turn, and counts it', async () => {
      const first = host.call('g', 'hold');
      await held(1);
      const late = await host.call('g', 'late', { timeoutMs: 30 }).catch((e: unknown) => e);
      expect(late).to.have.property('code', 'ERR_TIMEOUT');
      gates[0]!();
      expect(await first).to.equal('held');
      expect(await host.call('g', 'next')).to.equal('done');
      expect(turns).to.deep.equal(['hold', 'next']);
      expect(host.counters.droppedInMailbox).to.equal(1);
      expect(host.load.pending).to.equal(0);
    });

    it('sends no reply once the call’s deadline has passed during the turn', async () => {
      const call = host.call('r', 'hold', { timeoutMs: 30 }).catch((e: unknown) => e);
      await held(1);
      expect(await call).to.have.property('code', 'ERR_TIMEOUT');
      gates[0]!();
      await host.call('r', 'after');
      expect(host.counters.droppedReplies).to.equal(1);
    });

    it('refuses a call beyond maxPendingCalls with OverloadedError', async () => {
      // Three pending: two turns held, one call queued behind the first.
      const calls = [host.call('p', 'hold'), host.call('p', 'x'), host.call('q', 'hold')];
      await held(2);
      const err = await host.call('p', 'y').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OverloadedError).with.property('limit', 'maxPendingCalls');
      expect(host.load.refused.maxPendingCalls).to.equal(1);
      for (const open of gates) open();
      await Promise.all(calls);
    });

    it('refuses new activations while the member sheds load, and serves live ones', async () => {
      await host.stop();
      // Room for a queue the shedder acts on (it leaves one shorter than 64 calls alone).
      host = new OneKind(host.def, 4, { loadShedding: { enabled: false } });
      expect(await host.call('live', 'x')).to.equal('done');
      host.load.shedding = true;
      expect(await host.call('new-1', 'x'), 'a short queue is not shed').to.equal('done');
      host.load.pending += 1000;
      const err = await host.call('new-2', 'x').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OverloadedError).with.property('limit', 'loadShedding');
      expect(host.activator.table.count).to.equal(2);
      host.load.pending -= 1000;
      expect(await host.call('live', 'y')).to.equal('done');
    });
  });
});
