import { expect } from 'chai';
import { errorsOnlyLogger, recordingLogger } from '@granary/testkit';
import type { ShardAcquired, ShardReleased } from '../../src/membership/cluster-events';
import { ShardOwnership } from '../../src/membership/shard-ownership';
import type { Member, Topology } from '../../src/membership/topology';
import { ownerOf } from '../../src/placement/owner-of';
import type {
  ClaimReleased,
  ClaimResult,
  ClusterProvider,
  HeldClaims,
  LeaseHealth,
} from '../../src/providers/cluster-provider';

const KIND = 'K';
const SHARDS = 16;

const member = (id: string): Member => ({
  id,
  address: `${id}:1`,
  kinds: [KIND],
  kindShards: { [KIND]: { shardCount: SHARDS, ranges: SHARDS } },
  incarnation: 1,
  status: 'up',
});

/** Claims in memory, with the holder of a shard the test sets, and a lease the test breaks. */
class ScriptedProvider implements ClusterProvider {
  /** Shards another member holds (claims of them answer heldBy). */
  readonly heldByOthers = new Map<number, string>();
  readonly claims = new Map<number, number>();
  readonly released: Array<{ shard: number; epoch: number }> = [];
  valid = true;
  private revision = 100;
  private releasedListeners: Array<(e: ClaimReleased) => void> = [];

  join = async (): Promise<void> => {};
  markLeaving = async (): Promise<void> => {};
  leave = async (): Promise<void> => {};
  topology = (): Topology => ({ version: 0, members: [] });
  onTopology = (): (() => void) => () => undefined;
  onLeaseHealth =
    (_l: (e: LeaseHealth) => void): (() => void) =>
    () =>
      undefined;

  async claim(_kind: string, shard: number): Promise<ClaimResult> {
    const holder = this.heldByOthers.get(shard);
    if (holder !== undefined) return { heldBy: holder, holderEpoch: 1 };
    const epoch = ++this.revision;
    this.claims.set(shard, epoch);
    return { epoch };
  }

  async release(_kind: string, shard: number, epoch: number): Promise<void> {
    if (this.claims.get(shard) === epoch) this.claims.delete(shard);
    this.released.push({ shard, epoch });
  }

  onClaimReleased(listener: (e: ClaimReleased) => void): () => void {
    this.releasedListeners.push(listener);
    return () => undefined;
  }

  /** Another member let go of `shard` (or its claim vanished; `handOff`: a member said so). */
  letGo(shard: number, epoch = 1, handOff?: boolean): void {
    this.heldByOthers.delete(shard);
    for (const l of this.releasedListeners) l({ kind: KIND, shard, epoch, handOff });
  }

  leaseValid(): boolean {
    return this.valid;
  }

  /** The audit's read of this member's claims, answered when the test calls `answerHeld`. */
  heldClaims(): Promise<HeldClaims> {
    // Listed now, the revision read when answered (as etcd answers LeaseTimeToLive).
    const claims = [...this.claims.keys()].map((shard) => ({ kind: KIND, shard }));
    return new Promise((resolve) => {
      this.answerHeld = () => resolve({ revision: this.revision, claims });
    });
  }

  answerHeld: (() => void) | undefined;
}

describe('ShardOwnership', () => {
  let provider: ScriptedProvider;
  let ownership: ShardOwnership;
  let acquired: ShardAcquired[];
  let released: ShardReleased[];
  let waiters: Array<() => void>;
  const two: Topology = { version: 1, members: [member('a'), member('b')] };
  const mine = (t: Topology): number[] =>
    Array.from({ length: SHARDS }, (_, s) => s).filter((s) => ownerOf(KIND, s, t)?.id === 'a');

  /** Resolves once `check` holds, re-checked on each acquired/released event. */
  const until = (check: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const w = (): void => {
        if (check()) {
          waiters = waiters.filter((x) => x !== w);
          resolve();
        }
      };
      waiters.push(w);
      w();
    });

  beforeEach(() => {
    provider = new ScriptedProvider();
    acquired = [];
    released = [];
    waiters = [];
    const tick = (): void => {
      for (const w of [...waiters]) w();
    };
    ownership = new ShardOwnership(
      provider,
      'a',
      [{ name: KIND, shards: { shardCount: SHARDS, ranges: SHARDS } }],
      {
        acquired: (e) => {
          acquired.push(e);
          tick();
        },
        released: (e) => {
          released.push(e);
          tick();
        },
      },
      errorsOnlyLogger,
      60_000,
    );
    provider.onClaimReleased((e) => ownership.claimReleased(e));
  });
  afterEach(() => ownership.stop());

  it('claims exactly the shards this member is the desired owner of, each with its epoch', async () => {
    const wanted = mine(two);
    expect(wanted.length).to.be.within(1, SHARDS - 1);
    ownership.start(two);
    await until(() => acquired.length === wanted.length);
    expect(ownership.heldShards(KIND)).to.deep.equal(wanted);
    for (const e of acquired) expect(ownership.epochOf(KIND, e.shard)).to.equal(e.epoch);
  });

  it('gives a gate that serves a held shard only while the lease is valid and not fenced', async () => {
    const [shard] = mine(two);
    const other = Array.from({ length: SHARDS }, (_, s) => s).find((s) => !mine(two).includes(s))!;
    ownership.start(two);
    await until(() => acquired.length === mine(two).length);
    const gate = ownership.gate(KIND)!;
    expect(gate.canServe(shard!)).to.equal(true);
    expect(gate.epochOf(shard!)).to.be.above(0);
    expect(gate.canServe(other)).to.equal(false);
    expect(gate.epochOf(other)).to.equal(0);
    expect(gate.ownerOf(other)).to.equal('b:1');
    provider.valid = false; // the lease cannot be proven alive: fenced at once
    expect(gate.canServe(shard!)).to.equal(false);
    provider.valid = true;
    ownership.leaseLost();
    expect(gate.canServe(shard!)).to.equal(false);
    expect(released.every((e) => e.reason === 'lease-lost')).to.equal(true);
    expect(released).to.have.length(mine(two).length);
    ownership.leaseRestored();
    await until(() => gate.canServe(shard!));
    expect(ownership.gate('other-kind')).to.equal(undefined);
  });

  it('drains a shard it should no longer own before releasing it with its epoch', async () => {
    const solo: Topology = { version: 1, members: [member('a')] };
    ownership.start(solo);
    await until(() => acquired.length === SHARDS);
    const drained: number[] = [];
    let release!: () => void;
    const draining = new Promise<void>((r) => (release = r));
    ownership.onBeforeRelease(async (_kind, shard) => {
      drained.push(shard);
      for (const w of [...waiters]) w(); // a drain is no acquired/released event: re-check here
      await draining;
    });
    const moving = Array.from({ length: SHARDS }, (_, s) => s).filter(
      (s) => !mine(two).includes(s),
    );
    ownership.topologyChanged(two);
    await until(() => drained.length === moving.length);
    expect(provider.released).to.deep.equal([]); // the hooks have not settled yet
    release();
    await until(() => released.length === moving.length);
    expect(released.every((e) => e.reason === 'rebalance')).to.equal(true);
    await until(() => provider.released.length === moving.length);
    expect(provider.released.map((r) => r.shard).sort((x, y) => x - y)).to.deep.equal(moving);
    expect(ownership.heldShards(KIND)).to.deep.equal(mine(two));
  });

  it('waits for a shard another member holds and claims it as soon as that claim is gone', async () => {
    const solo: Topology = { version: 1, members: [member('a')] };
    provider.heldByOthers.set(3, 'old-owner');
    ownership.start(solo);
    await until(() => acquired.length === SHARDS - 1);
    expect(ownership.heldShards(KIND)).to.not.include(3);
    provider.letGo(3);
    await until(() => acquired.length === SHARDS);
    expect(ownership.heldShards(KIND)).to.include(3);
  });

  it('the audit does not take a claim granted while it read the store for a vanished one', async () => {
    const solo: Topology = { version: 1, members: [member('a')] };
    provider.heldByOthers.set(3, 'old-owner');
    ownership.start(solo);
    await until(() => acquired.length === SHARDS - 1);
    const audit = ownership.audit();
    expect(provider.answerHeld, 'the audit is reading the store').to.not.equal(undefined);
    provider.letGo(3); // granted to this member while the audit's read is in flight
    await until(() => ownership.epochOf(KIND, 3) !== undefined);
    provider.answerHeld!();
    await audit;
    expect(
      released.map((e) => `${e.shard}:${e.reason}`),
      'shards released by the audit (3 is held in the store)',
    ).to.deep.equal([]);
    expect(ownership.heldShards(KIND)).to.have.length(SHARDS);
  });

  it('logs stray claims found by the audit as one line per retry tick, not one per range', async () => {
    // A rebalance on a slow etcd leaves thousands of claims whose replies were lost; the audit
    // releases each. One warn line per range buried a 3-node cluster's log under 5,000 lines.
    const { logger, lines } = recordingLogger();
    const strays = Array.from({ length: 200 }, (_, shard) => ({ kind: 'gone', shard }));
    const auditing = Object.assign(Object.create(provider) as ScriptedProvider, {
      heldClaims: async (): Promise<HeldClaims> => ({ revision: 1, claims: strays }),
      releaseStray: async (_kind: string, shard: number): Promise<void> => {
        if (shard % 2 === 1) throw new Error('DEADLINE_EXCEEDED');
      },
    });
    const events = { acquired(): void {}, released(): void {} };
    const own = new ShardOwnership(auditing, 'a', [], events, logger, 60_000);
    own.start({ version: 1, members: [member('a')] });
    await own.audit();
    await new Promise((resolve) => setImmediate(resolve)); // the releases' replies
    own.stop(); // logs what was counted since the last tick
    const warned = lines.filter((l) => l.level === 'warn').map((l) => l.msg);
    expect(warned).to.deep.equal([
      '100 claims this member did not know of released (last one attached)',
      '100 stray claims not released; the next audit retries (last one attached)',
    ]);
  });

  it('drops a claim that vanished from the store (reason vanished)', async () => {
    const solo: Topology = { version: 1, members: [member('a')] };
    ownership.start(solo);
    await until(() => acquired.length === SHARDS);
    const epoch = ownership.epochOf(KIND, 5)!;
    provider.claims.delete(5);
    provider.letGo(5, epoch);
    expect(released.find((e) => e.shard === 5)).to.include({ reason: 'vanished', epoch });
    await until(() => ownership.epochOf(KIND, 5) !== undefined && acquired.length === SHARDS + 1);
  });

  it('keeps a claim a hand-off note says was released: a member speaks for its own claims only', async () => {
    // Anyone who can write under the etcd prefix can write a note naming this member's claim
    // and its epoch (both readable there); it made the member drop the range and claim it again.
    const solo: Topology = { version: 1, members: [member('a')] };
    ownership.start(solo);
    await until(() => acquired.length === SHARDS);
    const epoch = ownership.epochOf(KIND, 5)!;
    provider.letGo(5, epoch, true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(released.filter((e) => e.shard === 5)).to.deep.equal([]);
    expect(ownership.epochOf(KIND, 5)).to.equal(epoch);
  });
});
