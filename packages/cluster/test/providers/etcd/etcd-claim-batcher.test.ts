import { expect } from 'chai';
import { GRPCDeadlineExceededError, type Etcd3, type ITxnRequest, type ITxnResponse } from 'etcd3';
import { LeaseLostError } from '../../../src/errors';
import {
  EtcdClaimBatcher,
  type EtcdTxnCalls,
} from '../../../src/providers/etcd/etcd-claim-batcher';
import { encodeClaim } from '../../../src/providers/etcd/etcd-keys';
import { etcdForSuite } from '../../fixtures/etcd-for-suite';

/** The real KV client, counting transactions, with replies the test can make get lost. */
class CountingKv implements EtcdTxnCalls {
  txns = 0;
  /** Transactions sent and not answered yet, and the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  /** The next this many transactions are applied by etcd, but their replies are lost. */
  loseReplies = 0;

  constructor(private readonly client: Etcd3) {}

  async txn(req: ITxnRequest, options?: { deadline?: number }): Promise<ITxnResponse> {
    this.txns++;
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    const res = await this.client.kv.txn(req, options).finally(() => this.inFlight--);
    if (this.loseReplies > 0) {
      this.loseReplies--;
      throw new GRPCDeadlineExceededError('reply lost (test)');
    }
    return res;
  }
}

describe('EtcdClaimBatcher', function () {
  this.timeout(30_000);
  const suite = etcdForSuite();
  let kv: CountingKv;
  let lease: string;
  let otherLease: string;
  let current: Set<string>;
  let batcher: EtcdClaimBatcher;
  let n = 0;
  const key = (s: number): Buffer => Buffer.from(`/t/${n}/shards/K/${s}`);
  const value = (member: string): Buffer => encodeClaim({ member, incarnation: 1 });

  let client: Etcd3;
  beforeEach(async () => {
    client = suite.client;
    n++;
    lease = String(await client.lease(30, { autoKeepAlive: false }).grant());
    otherLease = String(await client.lease(30, { autoKeepAlive: false }).grant());
    current = new Set([lease]);
    kv = new CountingKv(client);
    batcher = new EtcdClaimBatcher(
      () => kv,
      2000,
      (l) => current.has(l),
    );
  });

  it('claims issued in one tick go in few transactions (64 each), each granted with its key’s revision', async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, s) => batcher.claim(key(s), value('a'), lease)),
    );
    expect(kv.txns).to.equal(2);
    for (const [s, r] of results.entries()) {
      const stored = await client.get(key(s).toString()).exec();
      expect(r).to.deep.equal({ epoch: Number(stored.kvs[0]!.create_revision) });
      expect(String(stored.kvs[0]!.lease)).to.equal(lease);
    }
  });

  it('a burst of claims waits here, not in etcd: at most 4 transactions in flight, every claim granted', async () => {
    const results = await Promise.all(
      Array.from({ length: 64 * 12 }, (_, s) => batcher.claim(key(s), value('a'), lease)),
    );
    expect(kv.txns, 'transactions of 64 claims each').to.equal(12);
    expect(kv.maxInFlight, 'most transactions in flight at once').to.be.within(1, 4);
    expect(results.filter((r) => 'epoch' in r)).to.have.length(64 * 12);
  });

  it('a queued claim its member no longer wants is answered abandoned and never written', async () => {
    let wanted = true;
    const first = Array.from({ length: 64 * 4 }, (_, s) =>
      batcher.claim(key(s), value('a'), lease),
    );
    // Queued behind the 4 transactions above; unwanted by the time its batch would go.
    const late = batcher.claim(key(1000), value('a'), lease, () => wanted);
    wanted = false;
    await Promise.all(first);
    expect(await late).to.deep.equal({ abandoned: true });
    expect(
      (await client.get(key(1000).toString()).exec()).kvs,
      'abandoned key in etcd',
    ).to.have.length(0);
    expect(kv.txns).to.equal(4);
  });

  it('a key another member holds answers with its holder and epoch; the rest of the batch is still granted', async () => {
    await client.put(key(1).toString()).value(value('b')).lease(otherLease).exec();
    const held = await client.get(key(1).toString()).exec();
    const [one, two, three] = await Promise.all(
      [1, 2, 3].map((s) => batcher.claim(key(s), value('a'), lease)),
    );
    expect(one).to.deep.equal({
      heldBy: 'b',
      holderEpoch: Number(held.kvs[0]!.create_revision),
    });
    expect(two).to.have.property('epoch');
    expect(three).to.have.property('epoch');
  });

  it('deletes a claim key on no lease (no member wrote it) and claims the range, telling who asked', async () => {
    // A hand-written or foreign key held its range forever: its "holder" never lets go.
    const foreign: string[] = [];
    batcher = new EtcdClaimBatcher(
      () => kv,
      2000,
      (l) => current.has(l),
      undefined,
      (k) => foreign.push(k.toString()),
    );
    await client.put(key(5).toString()).value('{"member":"ghost"}');
    const r = await batcher.claim(key(5), value('a'), lease);
    const stored = (await client.get(key(5).toString()).exec()).kvs[0]!;
    expect(r).to.deep.equal({ epoch: Number(stored.create_revision) });
    expect(String(stored.lease)).to.equal(lease);
    expect(foreign).to.deep.equal([key(5).toString()]);
  });

  it('releases a key only while it still carries the release’s epoch', async () => {
    const granted = (await batcher.claim(key(7), value('a'), lease)) as { epoch: number };
    await batcher.release(key(7), granted.epoch - 1); // an older claim's epoch: kept
    expect((await client.get(key(7).toString()).exec()).kvs).to.have.length(1);
    await batcher.release(key(7), granted.epoch);
    expect((await client.get(key(7).toString()).exec()).kvs).to.have.length(0);
  });

  it('releases stray claims in few transactions, only those still on the lease, a lost reply read back', async () => {
    await Promise.all(
      Array.from({ length: 200 }, (_, s) => batcher.claim(key(s), value('a'), lease)),
    );
    // Range 3 went to another member meanwhile: the stray release must leave it be.
    await client.delete().key(key(3).toString());
    await client.put(key(3).toString()).value(value('b')).lease(otherLease).exec();
    kv.txns = 0;
    kv.maxInFlight = 0;
    kv.loseReplies = 1;
    await Promise.all(Array.from({ length: 200 }, (_, s) => batcher.releaseStray(key(s), lease)));
    // 4 batches of at most 64; the one with key 3 fails its compare and goes again without it;
    // the lost reply is read back (and its batch sent again only if etcd had not applied it).
    expect(kv.txns, 'transactions').to.be.within(5, 8);
    expect(kv.maxInFlight).to.be.at.most(4);
    const left = await client.getAll().prefix(`/t/${n}/`).keys();
    expect(left).to.deep.equal([key(3).toString()]);
  });

  it('reads a claim whose reply was lost back: granted once, not claimed twice', async () => {
    kv.loseReplies = 1;
    const r = (await batcher.claim(key(9), value('a'), lease)) as { epoch: number };
    const stored = await client.get(key(9).toString()).exec();
    expect(r.epoch).to.equal(Number(stored.kvs[0]!.create_revision));
    expect(kv.txns).to.equal(2); // the lost claim, then the read back
  });

  it('refuses claims on a lease that is no longer this member’s with LeaseLostError', async () => {
    current.clear();
    const err = await batcher.claim(key(4), value('a'), lease).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(LeaseLostError);
    expect(kv.txns).to.equal(0);
  });
});
