import { expect } from 'chai';
import { StateDurabilityError } from '../../src/state/errors';
import { planDurability } from '../../src/state/redis/durability-plan';
import type { ServerFacts } from '../../src/state/redis/server-facts';

const server = (over: Partial<ServerFacts> = {}): ServerFacts => ({
  persistence: { appendonly: true, appendfsync: 'everysec' }, // Redis' own default
  persistenceSource: 'config',
  configError: undefined,
  version: '7.0.15',
  role: 'master',
  replicas: 0,
  waitAof: false,
  ...over,
});
/** A server that writes its append-only file before each reply, as the levels above 'none' need. */
const primary = (over: Partial<ServerFacts> = {}): ServerFacts =>
  server({ persistence: { appendonly: true, appendfsync: 'always' }, ...over });
const opts = { replicas: 1, cluster: false };

function refusal(run: () => unknown): StateDurabilityError {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(StateDurabilityError);
    return err as StateDurabilityError;
  }
  throw new Error('expected StateDurabilityError');
}

describe('planDurability', () => {
  it("'none' asks nothing of the server, even one that keeps nothing", () => {
    const bare = server({ persistence: undefined, persistenceSource: 'unknown' });
    expect(planDurability('none', bare, opts)).to.deep.equal({ replicas: 0, waitAof: false });
  });

  it("'restart' needs appendonly yes with appendfsync always or no (Redis writes the file before replying)", () => {
    const no = server({ persistence: { appendonly: true, appendfsync: 'no' } });
    expect(planDurability('restart', no, opts)).to.deep.equal({ replicas: 0, waitAof: false });
    const always = server({ persistence: { appendonly: true, appendfsync: 'always' } });
    expect(planDurability('restart', always, opts).replicas).to.equal(0);
    const off = server({ persistence: { appendonly: false } });
    expect(refusal(() => planDurability('restart', off, opts)).setting).to.equal('appendonly');
  });

  it("'restart' and 'replicated' refuse appendfsync everysec (a killed Redis loses the writes it postponed while fsyncing), naming appendfsync", () => {
    for (const level of ['restart', 'replicated'] as const) {
      const err = refusal(() =>
        planDurability(level, server({ replicas: 1 }), { ...opts, defaulted: true }),
      );
      expect(err.setting, level).to.equal('appendfsync');
      expect(err.message, level)
        .to.contain('appendfsync everysec')
        .and.contain('postpones')
        .and.contain('appendfsync always')
        .and.contain("durability: 'none'");
    }
    const undeclared = server({ persistence: { appendonly: true }, persistenceSource: 'declared' });
    const err = refusal(() => planDurability('restart', undeclared, opts));
    expect(err.setting).to.equal('appendfsync');
    expect(err.message).to.contain('(not declared)').and.contain('declared in serverPersistence');
  });

  it("'fsync' uses appendfsync always, else WAITAOF where the server has it, else refuses", () => {
    const always = server({ persistence: { appendonly: true, appendfsync: 'always' } });
    expect(planDurability('fsync', always, opts)).to.deep.equal({ replicas: 0, waitAof: false });
    const modern = server({ version: '7.2.4', waitAof: true });
    expect(planDurability('fsync', modern, opts)).to.deep.equal({ replicas: 0, waitAof: true });
    const old = refusal(() => planDurability('fsync', server(), opts));
    expect(old.setting).to.equal('appendfsync');
    expect(old.message).to.contain('Redis 7.0.15 has no WAITAOF');
    const cluster = { ...opts, cluster: true };
    expect(refusal(() => planDurability('fsync', modern, cluster)).message).to.contain(
      'Redis Cluster',
    );
  });

  it("'replicated' needs a primary with the replicas online, not on a Redis Cluster client", () => {
    expect(
      planDurability('replicated', primary({ replicas: 2 }), { ...opts, replicas: 2 }),
    ).to.deep.equal({ replicas: 2, waitAof: false });
    expect(refusal(() => planDurability('replicated', primary(), opts)).setting).to.equal(
      'connected_slaves',
    );
    const replica = primary({ role: 'slave', replicas: 1 });
    expect(refusal(() => planDurability('replicated', replica, opts)).setting).to.equal('role');
    const off = primary({ persistence: { appendonly: false }, replicas: 1 });
    expect(refusal(() => planDurability('replicated', off, opts)).setting).to.equal('appendonly');
    expect(
      refusal(() =>
        planDurability('replicated', primary({ replicas: 1 }), { ...opts, cluster: true }),
      ).setting,
    ).to.equal('durability');
  });

  it('after a reconnection only the persistence settings count (a new primary has no replicas yet)', () => {
    const fresh = primary({ replicas: 0 });
    expect(planDurability('replicated', fresh, { ...opts, recheck: true })).to.deep.equal({
      replicas: 1,
      waitAof: false,
    });
  });

  it('says where CONFIG is refused and nothing is declared, and when the level is the default', () => {
    const managed = server({
      persistence: undefined,
      persistenceSource: 'unknown',
      configError: "ERR unknown command 'CONFIG'",
    });
    const err = refusal(() => planDurability('restart', managed, { ...opts, defaulted: true }));
    expect(err.setting).to.equal('serverPersistence');
    expect(err.message)
      .to.contain('option durability, the default')
      .and.contain("unknown command 'CONFIG'");
  });
});
