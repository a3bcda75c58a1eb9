import { expect } from 'chai';
import type { Lease } from 'etcd3';
import { recordingLogger, type RecordedLine } from '@granary/testkit';
import { MembershipRecordRejectedError } from '../../../src/errors';
import type { Topology } from '../../../src/membership/topology';
import type { ClaimReleased } from '../../../src/providers/cluster-provider';
import { EtcdProvider } from '../../../src/providers/etcd/etcd-provider';
import { etcdForSuite } from '../../fixtures/etcd-for-suite';
import { next, self } from '../../fixtures/provider-events';

/**
 * What a writer under the cluster's prefix that is not a Granary member (or a member of a
 * hostile or broken build) can put in front of the topology watch. Each value is left out and
 * logged; the well-formed members stay as they are.
 */
const HOSTILE_MEMBERS: Array<[key: string, value: string]> = [
  ['not-json', '{"id":"not-json",'],
  ['array', '[1,2,3]'],
  // Names member a: it replaced a (and its address) in every topology read from etcd.
  ['impostor', '{"id":"a","address":"203.0.113.9:666","kinds":["K"],"status":"up"}'],
  ['no-address', '{"id":"no-address","address":4000,"kinds":["K"],"status":"up"}'],
  [
    'long-address',
    JSON.stringify({ id: 'long-address', address: `${'h'.repeat(300)}:1`, kinds: ['K'] }),
  ],
  ['kinds-object', '{"id":"kinds-object","address":"e:1","kinds":{"0":"K"},"status":"up"}'],
  [
    'huge-shards',
    '{"id":"huge-shards","address":"e:1","kinds":["K"],"status":"up","shards":{"K":[1073741824,1073741824]}}',
  ],
  [
    'nan-shards',
    '{"id":"nan-shards","address":"e:1","kinds":["K"],"status":"up","shards":{"K":["x",0]}}',
  ],
  ['odd-status', '{"id":"odd-status","address":"e:1","kinds":["K"],"status":"boss"}'],
  [
    'many-kinds',
    JSON.stringify({
      id: 'many-kinds',
      address: 'e:1',
      kinds: Array.from({ length: 5000 }, (_, i) => `k${i}`),
      status: 'up',
    }),
  ],
  ['long-id-'.padEnd(400, 'x'), JSON.stringify({ id: 'long-id-'.padEnd(400, 'x') })],
  // Well formed, but on no lease: no member wrote it, and it would never go (`put` uses none).
  ['leaseless', '{"id":"leaseless","address":"e:1","kinds":["K"],"status":"up"}'],
];

const rejected = (lines: RecordedLine[]): RecordedLine[] =>
  lines.filter((l) => l.fields.err instanceof MembershipRecordRejectedError);

describe('EtcdTopologyWatch', () => {
  const suite = etcdForSuite();
  let providers: EtcdProvider[] = [];
  let cluster = 0;
  beforeEach(() => cluster++);
  afterEach(async () => {
    await Promise.all(providers.map((p) => p.leave()));
    providers = [];
  });
  const name = (): string => `w${cluster}`;
  const make = (logger = recordingLogger().logger): EtcdProvider => {
    const p = new EtcdProvider({ endpoints: suite.etcd.endpoints, ttlSeconds: 2, logger });
    providers.push(p);
    return p;
  };
  const put = (key: string, value: string) =>
    suite.client.put(`/granary/${name()}/${key}`).value(value);
  /** Writes a member key as a member does: on a lease (revoked after the test). */
  const putMember = async (id: string, value: string): Promise<void> => {
    const lease = suite.client.lease(30, { autoKeepAlive: false });
    leases.push(lease);
    await lease.put(`/granary/${name()}/members/${id}`).value(value);
  };
  let leases: Lease[] = [];
  afterEach(async () => {
    await Promise.all(leases.map((l) => l.revoke().catch(() => undefined)));
    leases = [];
  });

  describe('member records', () => {
    it('leaves malformed records and a record naming another member out, logged with a typed error', async () => {
      const { logger, lines } = recordingLogger();
      const a = make(logger);
      await a.join(self('a', name()));
      for (const [key, value] of HOSTILE_MEMBERS) await put(`members/${key}`, value);
      // Written last, well formed: once it is seen, every record above was seen.
      const seen = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members.some((m) => m.id === 'b'),
      );
      await putMember('b', '{"id":"b","address":"b:1","kinds":["K"],"status":"up"}');
      const t = await seen;
      expect(t.members.map((m) => [m.id, m.address])).to.deep.equal([
        ['a', 'a:1'],
        ['b', 'b:1'],
      ]);
      const logged = rejected(lines);
      expect(logged.length).to.be.within(1, HOSTILE_MEMBERS.length);
      expect(logged.every((l) => l.level === 'warn')).to.equal(true);
      expect(logged[0]!.msg).to.contain('/members/not-json').and.contain('not JSON');
    });

    it('a member that joins later reads the same records and leaves the same ones out', async () => {
      for (const [key, value] of HOSTILE_MEMBERS) await put(`members/${key}`, value);
      await putMember('b', '{"id":"b","address":"b:1","kinds":["K"],"status":"up"}');
      const { logger, lines } = recordingLogger();
      const a = make(logger);
      await a.join(self('a', name()));
      expect(a.topology().members.map((m) => [m.id, m.address])).to.deep.equal([
        ['a', 'a:1'],
        ['b', 'b:1'],
      ]);
      expect(rejected(lines).map((l) => l.fields.key)).to.include(
        `/granary/${name()}/members/impostor`,
      );
    });

    it("keeps a member that states an address without a port ('nonhost': no remote)", async () => {
      const a = make();
      await a.join({ ...self('a', name()), address: 'nonhost' });
      expect(a.topology().members.map((m) => [m.id, m.address])).to.deep.equal([['a', 'nonhost']]);
    });

    it('a member key rewritten with a malformed value drops that member', async () => {
      const a = make();
      await a.join(self('a', name()));
      const good = '{"id":"b","address":"b:1","kinds":["K"],"status":"up"}';
      const joined = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members.length === 2,
      );
      await putMember('b', good);
      await joined;
      const gone = next<Topology>(
        (l) => a.onTopology(l),
        (t) => t.members.length === 1,
      );
      await putMember('b', '{"id":"b","address":"b:1","kinds":"K"}');
      expect((await gone).members.map((m) => m.id)).to.deep.equal(['a']);
    });
  });

  describe('notes', () => {
    it('hands on only well-formed released items: a range in bounds and an epoch that is a revision', async () => {
      const { logger, lines } = recordingLogger();
      const a = make(logger);
      await a.join(self('a', name()));
      const got: ClaimReleased[] = [];
      const last = next<ClaimReleased>(
        (l) => a.onClaimReleased((e) => (got.push(e), l(e))),
        (e) => e.shard === 7,
      );
      const released = [
        ['K', -1, 5],
        ['K', 1.5, 5],
        ['K', 2, 'x'],
        ['K', 3, -4],
        ['K', 4, 2 ** 60],
        ['K', 2 ** 40, 5],
        [{}, 5, 5],
        ['K', 6],
        ['K', 7, 5],
      ];
      await put('notes/a/evil', JSON.stringify({ released }));
      await last;
      expect(got).to.deep.equal([{ kind: 'K', shard: 7, epoch: 5, handOff: true }]);
      expect(rejected(lines).map((l) => l.msg)).to.deep.equal([
        `membership record /granary/${name()}/notes/a/evil partly ignored: 8 released item(s) not [kind, range, epoch] in range`,
      ]);
    });
  });
});
