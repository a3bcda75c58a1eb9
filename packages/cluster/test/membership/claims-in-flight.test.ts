import { expect } from 'chai';
import { errorsOnlyLogger } from '@granary/testkit';
import { MAX_CLAIMS_IN_FLIGHT, ShardOwnership } from '../../src/membership/shard-ownership';
import { ownerOf } from '../../src/placement/owner-of';
import type { Member, Topology } from '../../src/membership/topology';
import type { ClaimResult, ClusterProvider } from '../../src/providers/cluster-provider';

const KIND = 'K';
/** Four times the bound: a member alone wants every range. */
const RANGES = 4 * MAX_CLAIMS_IN_FLIGHT;

function member(id: string): Member {
  return {
    id,
    address: `${id}:1`,
    kinds: [KIND],
    kindShards: { [KIND]: { shardCount: RANGES, ranges: RANGES } },
    incarnation: 1,
    status: 'up',
  };
}

const alone: Topology = { version: 1, members: [member('a')] };
/** A second member joins: about half of a's ranges become b's. */
const pair: Topology = { version: 2, members: [member('a'), member('b')] };

/** A provider whose claims wait until the test answers them (a slow store). */
class HeldProvider implements ClusterProvider {
  readonly pending: Array<{ range: number; answer(r: ClaimResult): void }> = [];
  most = 0;
  private revision = 100;

  join = async (): Promise<void> => {};
  markLeaving = async (): Promise<void> => {};
  leave = async (): Promise<void> => {};
  topology = (): Topology => alone;
  onTopology = (): (() => void) => () => undefined;
  onLeaseHealth = (): (() => void) => () => undefined;
  onClaimReleased = (): (() => void) => () => undefined;
  leaseValid = (): boolean => true;
  /** Ranges released in the store, in order. */
  readonly released: number[] = [];

  release = async (_kind: string, range: number): Promise<void> => {
    this.released.push(range);
  };

  claim(_kind: string, range: number, wanted?: () => boolean): Promise<ClaimResult> {
    return new Promise((resolve) => {
      this.pending.push({
        range,
        answer: (r) => resolve(wanted && !wanted() ? { abandoned: true } : r),
      });
      this.most = Math.max(this.most, this.pending.length);
    });
  }

  /** Grants every claim waiting now. */
  grantAll(): number {
    const batch = this.pending.splice(0);
    for (const p of batch) p.answer({ epoch: ++this.revision });
    return batch.length;
  }
}

/** Lets the reconcile queue run its turns (setImmediate) and the claims settle. */
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('ShardOwnership claims in flight', () => {
  let provider: HeldProvider;
  let ownership: ShardOwnership;
  let acquired: number;

  beforeEach(() => {
    provider = new HeldProvider();
    acquired = 0;
    ownership = new ShardOwnership(
      provider,
      'a',
      [{ name: KIND, shards: { shardCount: RANGES, ranges: RANGES } }],
      { acquired: () => acquired++, released: () => undefined },
      errorsOnlyLogger,
      60_000,
    );
  });
  afterEach(() => ownership.stop());

  it('starts at most MAX_CLAIMS_IN_FLIGHT claims at once and claims the rest as they are answered', async () => {
    ownership.start(alone);
    await turns(20);
    expect(provider.pending.length, 'claims started before any was answered').to.equal(
      MAX_CLAIMS_IN_FLIGHT,
    );
    for (let round = 0; acquired < RANGES && round < 100; round++) {
      provider.grantAll();
      await turns(20);
    }
    expect(acquired, 'ranges acquired once every claim was answered').to.equal(RANGES);
    expect(provider.most, 'most claims waiting at once').to.equal(MAX_CLAIMS_IN_FLIGHT);
    expect(ownership.heldShards(KIND)).to.have.length(RANGES);
  });

  it('releases the ranges a new member takes over while MAX_CLAIMS_IN_FLIGHT claims are unanswered', async () => {
    ownership.start(alone);
    await turns(20);
    provider.grantAll(); // a now holds the first MAX_CLAIMS_IN_FLIGHT ranges
    await turns(20);
    expect(provider.pending.length, 'claims in flight (unanswered) before the join').to.equal(
      MAX_CLAIMS_IN_FLIGHT,
    );
    const held = new Set(ownership.heldShards(KIND));
    const handOver = [...held].filter((r) => ownerOf(KIND, r, pair)?.id === 'b');
    expect(handOver.length, 'held ranges that become b').to.be.greaterThan(0);
    ownership.topologyChanged(pair);
    // A release hands a range to a member waiting for it: it must not wait for this member's
    // own claims to be answered (in a starved join storm that is seconds per window).
    for (let i = 0; i < 200 && provider.released.length < handOver.length; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(
      provider.released.length,
      `ranges released to b while a's claims were unanswered (${handOver.length} to hand over)`,
    ).to.equal(handOver.length);
    expect(new Set(provider.released)).to.deep.equal(new Set(handOver));
  });

  it('a graceful leave with claims still unanswered neither hangs nor sends the queued rest', async () => {
    ownership.start(alone);
    await turns(20);
    const leaving = ownership.releaseAll();
    await turns(5);
    // The waiting claims are answered after the leave began: they are no longer wanted.
    provider.grantAll();
    await leaving;
    expect(provider.pending, 'claims started after the leave began').to.have.length(0);
    expect(ownership.heldShards(KIND)).to.have.length(0);
  });
});
