import { expect } from 'chai';
import { silentLogger } from '@granary/core';
import type { Topology } from '../../../src/membership/topology';
import { EtcdCompactor } from '../../../src/providers/etcd/etcd-compactor';
import { etcdForSuite } from '../../fixtures/etcd-for-suite';

const INTERVAL_MS = 100;
const ALONE: Topology = {
  version: 1,
  members: [{ id: 'a', address: '127.0.0.1:1', kinds: [], incarnation: 1, status: 'up' }],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('EtcdCompactor', function () {
  this.timeout(30_000);
  const suite = etcdForSuite();

  it('compacts each revision once: an idle etcd is not asked to compact to the same revision again', async () => {
    const { client } = suite;
    await client.put('/compactor-test/k').value('1');
    const compactedTo: string[] = [];
    const compact = client.kv.compact.bind(client.kv);
    // Counts the compactions sent to the real etcd (each still reaches it).
    client.kv.compact = (req, options) => {
      compactedTo.push(String(req.revision));
      return compact(req, options);
    };
    const compactor = new EtcdCompactor(
      () => client,
      'a',
      () => ALONE,
      INTERVAL_MS,
      2000,
      silentLogger,
    );
    compactor.start();
    try {
      // Idle for ~10 intervals: one compaction, to the revision read at the first.
      await sleep(INTERVAL_MS * 10);
      expect(compactedTo).to.have.length(1);
      // History moves: its new revision is compacted once, one interval after it was read.
      await client.put('/compactor-test/k').value('2');
      await sleep(INTERVAL_MS * 10);
      expect(compactedTo).to.have.length(2);
      expect(Number(compactedTo[1])).to.be.greaterThan(Number(compactedTo[0]));
    } finally {
      compactor.stop();
      client.kv.compact = compact;
    }
  });
});
