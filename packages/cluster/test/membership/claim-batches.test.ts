import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import { kind } from '../../src/grains/kind';
import type { ShardReleased } from '../../src/membership/cluster-events';
import type { ClaimResult, ReleaseRequest } from '../../src/providers/cluster-provider';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

const RANGES = 16_384; // the default shards and claim ranges per kind
/**
 * A batch is at most what the reconcile queue lets out between two answers (MAX_CLAIMS_IN_FLIGHT,
 * 1,024): 32 per kind at the least. One call per range (32,768 here) is what made a member's
 * start cost ~0.2 s of CPU per kind; this bound leaves room for smaller batches, not for that.
 */
const MOST_CALLS = 256;

/** MemoryProvider counting the store calls a member makes and the ranges they carry. */
class CountingProvider extends MemoryProvider {
  calls = { claim: 0, release: 0 };
  ranges = { claim: 0, release: 0 };

  override claim(kindName: string, shard: number): Promise<ClaimResult> {
    this.calls.claim++;
    this.ranges.claim++;
    return super.claim(kindName, shard);
  }

  override claimMany(kindName: string, shards: readonly number[]): Promise<ClaimResult[]> {
    this.calls.claim++;
    this.ranges.claim += shards.length;
    return super.claimMany(kindName, shards);
  }

  override release(kindName: string, shard: number, epoch: number): Promise<void> {
    this.calls.release++;
    this.ranges.release++;
    return super.release(kindName, shard, epoch);
  }

  override releaseMany(kindName: string, releases: readonly ReleaseRequest[]): Promise<void> {
    this.calls.release++;
    this.ranges.release += releases.length;
    return super.releaseMany(kindName, releases);
  }
}

describe('Cluster start and shutdown: claims and releases go to the store in batches', () => {
  it('a member alone claims 2 x 16,384 ranges, then hands them back, in a few hundred calls', async () => {
    const table = new MemoryClusterTable();
    const provider = new CountingProvider(table);
    const c = await Cluster.start({
      name: 'batches',
      id: 'alone',
      provider,
      kinds: [kind('A', () => ({ receive: () => 'a' })), { name: 'B' }],
    });
    try {
      expect(c.heldShards('A')).to.have.length(RANGES);
      expect(c.heldShards('B')).to.have.length(RANGES);
      expect(provider.ranges.claim).to.equal(2 * RANGES);
      expect(provider.calls.claim, `claim calls`).to.be.at.most(MOST_CALLS);
      // A shard with an activation is drained first: its release waits for it, the rest do not.
      expect(await c.request('A', 'x', 'hi')).to.equal('a');
    } finally {
      const released: ShardReleased[] = [];
      c.on('shard-released', (e) => released.push(e));
      await c.shutdown({ graceful: true });
      expect(released).to.have.length(2 * RANGES);
      expect(released.every((e) => e.reason === 'shutdown')).to.equal(true);
    }
    expect(provider.ranges.release).to.equal(2 * RANGES);
    expect(provider.calls.release).to.be.at.most(MOST_CALLS);
    expect(table.claimOf('A', 0)).to.equal(undefined);
    expect(table.claimOf('B', RANGES - 1)).to.equal(undefined);
  });
});
