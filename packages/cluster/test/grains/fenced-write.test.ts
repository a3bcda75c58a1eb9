import { expect } from 'chai';
import type { GrainContext } from '../../src/grains/grain';
import { GrainWithState } from '../../src/grains/grain-state';
import { kind } from '../../src/grains/kind';
import type { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import { MemoryNodes } from './memory-nodes';

const TTL_MS = 600;
const store = new MemoryStateStore();
/** Releases the turn held on the old owner; what its write ended with. */
let release: () => void = () => undefined;
let heldWrite: Promise<string> | undefined;

class Account extends GrainWithState<{ n: number }> {
  override async receive(ctx: GrainContext<{ n: number }>): Promise<unknown> {
    if (ctx.message === 'inc') {
      this.state.n++;
      await this.writeState();
    } else if (ctx.message === 'hold-then-inc') {
      // A turn that runs past its member's lease: here it waits, as a long turn would.
      this.state.n++;
      await new Promise<void>((r) => (release = r));
      heldWrite = this.writeState().then(
        () => 'written',
        (err: Error) => err.name,
      );
      await heldWrite.catch(() => undefined);
    }
    return { member: ctx.cluster.id, n: this.state.n };
  }
}

describe('a write from an activation whose member is fenced', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(
    () => [
      kind('acct', () => new Account(), {
        shardCount: 16,
        idleTimeoutMs: 60_000,
        state: { store, initial: () => ({ n: 0 }), codec: jsonStateCodec() },
      }),
    ],
    { ttlMs: TTL_MS },
  );
  before(async () => {
    await nodes.add('wa');
    await nodes.add('wb');
  });
  after(() => nodes.stopAll());

  it('is refused once the lease lapsed, even while the new owner has only loaded the state', async () => {
    const [a, b] = nodes.nodes as [(typeof nodes.nodes)[0], (typeof nodes.nodes)[0]];
    const id = Array.from({ length: 200 }, (_, i) => `acct-${i}`).find(
      (i) => a.ownerOf('acct', a.shardOf('acct', i))?.id === 'wb',
    )!;
    expect(await a.request('acct', id, 'inc')).to.deep.equal({ member: 'wb', n: 1 });
    // The old owner's turn starts, then its member's keep-alives stop and the lease lapses.
    const held = a.request('acct', id, 'hold-then-inc', { timeoutMs: 10_000 }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 50));
    (b.provider as MemoryProvider).crash();
    const t0 = Date.now();
    while (a.ownerOf('acct', a.shardOf('acct', id))?.id !== 'wa' && Date.now() - t0 < TTL_MS * 8) {
      await new Promise((r) => setTimeout(r, 20));
    }
    // The new owner activates the grain and reads n = 1; it writes nothing.
    const read = await a.request<{ member: string; n: number }>('acct', id, 'read', {
      timeoutMs: TTL_MS * 6,
    });
    expect(read).to.deep.equal({ member: 'wa', n: 1 });
    // The old turn goes on and writes under the old claim: that write must not land.
    release();
    await held;
    expect(await heldWrite).to.equal('MemberFencedError');
    const stored = await store.read('acct', id);
    expect(JSON.parse(Buffer.from(stored!.state).toString()).n).to.equal(1);
    nodes.nodes.splice(1, 1); // a crashed member now: not shut down gracefully
    await b.system.shutdown();
  });
});
