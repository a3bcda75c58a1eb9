import { expect } from 'chai';
import { type Etcd3, GRPCDeadlineExceededError, type ITxnRequest } from 'etcd3';
import type { EtcdHandle } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import type { EtcdTxnCalls } from '../../src/providers/etcd/etcd-claim-batcher';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import type { EtcdProviderOptions } from '../../src/providers/etcd/etcd-provider-options';
import { agreed, waitForClusters } from '../cluster/converge';
import { orphanClaimsWithin, type HeldReport } from '../fixtures/claim-audit';
import { etcdForSuite } from '../fixtures/etcd-for-suite';

const KIND = 'K';
const SHARDS = 16;

/**
 * An EtcdProvider whose next `dropClaimReplies` claim transactions are applied by etcd but
 * answered with a deadline error, as when the reply is lost or arrives after requestTimeoutMs.
 */
class LostReplyProvider extends EtcdProvider {
  dropClaimReplies = 0;
  private onDrop: () => void = () => undefined;
  /** Resolves once a reply has been dropped. */
  readonly dropped = new Promise<void>((resolve) => (this.onDrop = resolve));

  constructor(options: EtcdProviderOptions) {
    super(options);
  }

  protected override kv(): EtcdTxnCalls {
    const real = super.kv();
    return {
      txn: async (req: ITxnRequest, options?: { deadline?: number }) => {
        const res = await real.txn(req, options);
        if (this.dropClaimReplies > 0 && isClaim(req)) {
          this.dropClaimReplies--;
          this.onDrop();
          throw new GRPCDeadlineExceededError('Deadline exceeded (reply dropped by the test)');
        }
        return res;
      },
    };
  }
}

function isClaim(req: ITxnRequest): boolean {
  return (req.success ?? []).some((op) => op.request_put !== undefined);
}

function report(c: Cluster, kinds: string[]): HeldReport {
  return {
    id: c.id,
    held: new Map(
      kinds.map((k) => [k, new Map(c.heldShards(k).map((s) => [s, c.epochOf(k, s)!]))]),
    ),
  };
}

describe('Lost claim replies and orphan claims (etcd)', function () {
  this.timeout(30_000);
  let etcd: EtcdHandle;
  let client: Etcd3;
  let running: Cluster[] = [];
  let n = 0;
  const suite = etcdForSuite();
  before(() => ({ etcd, client } = suite));
  afterEach(async () => {
    await Promise.all(running.map((c) => c.shutdown({ graceful: false })));
    running = [];
  });

  async function start(
    name: string,
    id: string,
    provider: EtcdProvider,
    kinds: Array<{ name: string; shardCount: number }>,
    claimRetryMs: number,
  ): Promise<Cluster> {
    const c = await Cluster.start({ name, id, provider, kinds, claimRetryMs });
    running.push(c);
    return c;
  }

  it('a claim applied by etcd whose reply was lost is read back, not left as an orphan', async () => {
    const name = `lost${++n}`;
    const lossy = new LostReplyProvider({ endpoints: etcd.endpoints, ttlSeconds: 3 });
    lossy.dropClaimReplies = 1;
    // No retry tick during the test: only the read-back can find out what the lost reply said.
    const a = await start(name, 'a', lossy, [{ name: KIND, shardCount: SHARDS }], 60_000);
    await lossy.dropped;
    // The topology moves on at once: b takes over about half of a's shards.
    const b = await start(
      name,
      'b',
      new EtcdProvider({ endpoints: etcd.endpoints, ttlSeconds: 3 }),
      [{ name: KIND, shardCount: SHARDS }],
      60_000,
    );
    await waitForClusters([a, b], () => agreed([a, b], KIND, SHARDS), 'a and b agree', 10_000);
    const orphans = await orphanClaimsWithin(
      client,
      `/granary/${name}/`,
      () => [report(a, [KIND]), report(b, [KIND])],
      1000,
    );
    expect(orphans).to.deep.equal([]);
  });

  it('a claim on a live member that it does not know of is let go when a waiting member asks', async () => {
    const name = `stray${++n}`;
    const a = await start(
      name,
      'a',
      new EtcdProvider({ endpoints: etcd.endpoints, ttlSeconds: 3 }),
      [{ name: KIND, shardCount: SHARDS }],
      200,
    );
    // A claim on a's lease that a never made (what a late-applied write would leave): kind G,
    // which only b hosts.
    const member = (await client.get(`/granary/${name}/members/a`).exec()).kvs[0];
    await client
      .put(`/granary/${name}/shards/G/0`)
      .value(JSON.stringify({ member: 'a', incarnation: 0 }))
      .lease(member.lease)
      .exec();
    const b = await start(
      name,
      'b',
      new EtcdProvider({ endpoints: etcd.endpoints, ttlSeconds: 3 }),
      [{ name: 'G', shardCount: 1 }],
      200,
    );
    await waitForClusters([b], () => b.canServe('G', 0), 'b serves G/0', 10_000);
    const orphans = await orphanClaimsWithin(
      client,
      `/granary/${name}/`,
      () => [report(a, [KIND]), report(b, ['G'])],
      1000,
    );
    expect(orphans).to.deep.equal([]);
  });
});
