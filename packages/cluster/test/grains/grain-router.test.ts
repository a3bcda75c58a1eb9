import { expect } from 'chai';
import { ActorSystem, PID, Props, Remote } from '@granary/core';
import { DeadlockError, NotOwnerError } from '../../src/errors';
import type { GrainContext } from '../../src/grains/grain';
import { callHeader, grainIdOf } from '../../src/grains/internal/call-headers';
import { kind } from '../../src/grains/kind';
import { shardOf } from '../../src/placement/shard-of';
import { OneKind } from './fixtures/one-kind';

/** Answers with who it is and what it got; counts its turns. */
class Echo {
  static turns = 0;
  receive(ctx: GrainContext): unknown {
    Echo.turns++;
    return { identity: ctx.identity, activation: ctx.activationId, message: ctx.message };
  }
}

describe('GrainRouter', () => {
  let host: OneKind;
  beforeEach(() => {
    Echo.turns = 0;
    host = new OneKind(
      kind('echo', () => new Echo(), {
        reentrant: (m) => (m as { re?: boolean } | undefined)?.re === true,
      }),
    );
  });
  afterEach(() => host.stop());

  it('routes a call to the grain its PID names, and the same PID from another node to the same activation', async () => {
    const local = await host.call<{ identity: string; activation: string }>('g-1', 'hi');
    expect(local.identity).to.equal('g-1');
    // The owner's address is this system's once its remote runs: a caller on another node
    // addresses the grain the same way, and the router has no other face.
    const remoteHost = new Remote(host.system);
    await remoteHost.start({ host: '127.0.0.1', port: 0 });
    const other = new ActorSystem({ name: 'caller' });
    try {
      await new Remote(other).start({ host: '127.0.0.1', port: 0 });
      const target = new PID(host.system.address, grainIdOf('echo', 'g-1'));
      const remote = await other.root.request<{ activation: string }>(target, 'again', {
        timeoutMs: 5000,
      });
      expect(remote.activation).to.equal(local.activation);
      expect(host.events('activate')).to.have.length(1);
    } finally {
      await other.shutdown();
    }
  });

  it('reads the identity in place: slashes and non-ASCII characters reach their own activations', async () => {
    const ids = ['a/b/c', 'a', 'a/b', 'grün-1', '🙂'];
    const replies = await Promise.all(ids.map((id) => host.call<{ identity: string }>(id, 1)));
    expect(replies.map((r) => r.identity)).to.deep.equal(ids);
    expect(host.activator.table.count).to.equal(ids.length);
    for (const id of ids) {
      const shard = shardOf(id, host.activator.shardCount);
      expect(host.activator.table.inShard(shard).map((a) => a.identity)).to.include(id);
    }
  });

  it('answers NotOwnerError naming the believed owner while the shard drains, without a turn', async () => {
    await host.call('d-1', 'warm');
    const shard = shardOf('d-1', host.activator.shardCount);
    host.activator.draining[shard] = 1;
    const turns = Echo.turns;
    const err = await host.call('d-1', 'x').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NotOwnerError);
    expect(err).to.include({ kind: 'echo', identity: 'd-1', owner: 'owner-elsewhere:1' });
    expect(Echo.turns).to.equal(turns);
  });

  it('fails a call whose chain already waits on the grain with DeadlockError; a reentrant message passes', async () => {
    const header = callHeader('chain-1', ['other/x', 'echo/loop'], false)!;
    const err = await host.call('loop', 'x', { header }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlockError);
    expect((err as DeadlockError).chain).to.deep.equal(['other/x', 'echo/loop', 'echo/loop']);
    expect(Echo.turns).to.equal(0);
    const ok = await host.call<{ identity: string }>('loop', { re: true }, { header });
    expect(ok.identity).to.equal('loop');
    // Another grain of the kind is not in the chain.
    await host.call('not-loop', 'x', { header });
  });

  it('acknowledges a send once accepted; the grain answers the send’s reply-to', async () => {
    let answered!: (m: { identity: string; message: unknown }) => void;
    const answer = new Promise<{ identity: string; message: unknown }>((r) => (answered = r));
    const sink = host.system.root.spawn(
      Props.fromFunc((ctx) => {
        const m = ctx.message as { identity?: string; message: unknown };
        if (typeof m?.identity === 'string') answered(m as { identity: string; message: unknown });
      }),
    );
    const header = callHeader(undefined, undefined, true, sink);
    expect(await host.call('s-1', 'ping', { header })).to.equal(true);
    expect(await answer).to.include({ identity: 's-1', message: 'ping' });
  });
});
