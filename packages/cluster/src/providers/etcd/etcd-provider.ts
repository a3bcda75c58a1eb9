import { Etcd3, type IOptions } from 'etcd3';
import { LogThrottle } from '@granary/core';
import { LeaseLostError, MembershipRecordRejectedError, NotJoinedError } from '../../errors';
import { Listeners } from '../../internal/listeners';
import { NOOP_LOGGER, type ClusterLogger } from '../../internal/logger';
import type { MemberStatus, Topology } from '../../membership/topology';
import type {
  ClaimReleased,
  ClaimResult,
  ClusterProvider,
  HeldClaims,
  JoinRequest,
  LeaseHealth,
} from '../cluster-provider';
import { EtcdClaimBatcher, type EtcdTxnCalls } from './etcd-claim-batcher';
import { encodeClaim, encodeMember, EtcdKeys } from './etcd-keys';
import {
  resolveEtcdProviderOptions,
  type EtcdProviderOptions,
  type ResolvedEtcdProviderOptions,
} from './etcd-provider-options';
import { EtcdCompactor } from './etcd-compactor';
import { encodeNote } from './etcd-notes';
import { JoinBudget, retryUntil } from './etcd-join-retry';
import { EtcdMemberLease } from './etcd-member-lease';
import { LeaseThread } from './lease/lease-thread';
import { EtcdTopologyWatch, type ReceivedNote } from './etcd-topology-watch';
import { hostCooldownPolicy, PASS_THROUGH_POLICY } from './etcd-client-policy';

/** Foreign claim keys deleted are logged 4 per this interval (ms) at most, then counted. */
const FOREIGN_LOG_INTERVAL_MS = 10_000;

/**
 * gRPC reconnect backoff to etcd (grpc-js defaults to 1 s growing to 120 s, far too slow for a
 * lease of a few seconds).
 */
const GRPC_CHANNEL_OPTIONS = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 500,
  // The claim audit lists every key on a member's lease: a lone member of 4 kinds holds 65,536
  // claims (~3 MB), near grpc's default 4 MB limit on a received message.
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
};

/**
 * ClusterProvider on etcd (etcd3 client). The member key `<prefix>/<cluster>/members/<id>` lives
 * on a lease kept alive well inside `ttlSeconds`; a watch on `<prefix>/<cluster>/` drives the
 * topology. Claims are keys `<prefix>/<cluster>/shards/<kind>/<n>` created in a transaction only
 * if absent, on the member's lease; the epoch is the key's create revision; release deletes only
 * if the epoch matches. A member that cannot prove its lease alive fences itself (`lease-lost`)
 * and reports `lease-restored` once it is back: on the same lease if etcd still holds it, else
 * under a new registration (new incarnation); see EtcdMemberLease.
 *
 * @example
 * const provider = new EtcdProvider({ endpoints: ['http://127.0.0.1:2379'], ttlSeconds: 3 });
 * const cluster = await Cluster.start({ name: 'shop', provider, kinds: ['Cart'] });
 */
export class EtcdProvider implements ClusterProvider {
  private readonly options: ResolvedEtcdProviderOptions;
  /** Its own logger if given, else the member's (set at join). */
  private logger: ClusterLogger;
  private client: Etcd3 | undefined;
  private keys: EtcdKeys | undefined;
  private self: JoinRequest | undefined;
  private status: MemberStatus = 'up';
  private readonly registration: EtcdMemberLease;
  private watch: EtcdTopologyWatch | undefined;
  private compactor: EtcdCompactor | undefined;
  private readonly batcher: EtcdClaimBatcher;
  private stopped = false;
  /** Foreign claim keys deleted: a few lines per interval, then counted. */
  private foreignClaims = new LogThrottle(NOOP_LOGGER);
  private readonly topologyListeners = new Listeners<Topology>();
  private readonly releaseListeners = new Listeners<ClaimReleased>();
  private readonly letGoListeners = new Listeners<string>();

  /** Validates the options at once: a bad one throws InvalidOptionError naming it. */
  constructor(options: EtcdProviderOptions) {
    this.options = resolveEtcdProviderOptions(options);
    this.logger = this.options.logger ?? NOOP_LOGGER;
    this.registration = new EtcdMemberLease({
      options: this.options,
      logger: () => this.logger,
      client: (op) => this.requireClient(op),
      keys: (op) => this.requireKeys(op),
      self: (op) => this.requireSelf(op),
      memberValue: () => this.memberValue(),
      leaving: () => this.status !== 'up',
      stopped: () => this.stopped,
    });
    this.batcher = new EtcdClaimBatcher(
      () => this.kv(),
      this.options.requestTimeoutMs,
      (lease) => this.registration.currentId() === lease,
      {
        key: (to) => this.requireKeys('release').note(to, this.requireSelf('release').id),
        lease: () => this.registration.currentId(),
      },
      (key) => {
        const reason = "a claim on no lease (claims live on their holder's lease)";
        const err = new MembershipRecordRejectedError(
          key.toString().slice(0, 256),
          reason,
          'deleted',
        );
        this.foreignClaims.log('foreign-claim', 'warn', { err }, err.message);
      },
    );
  }

  async join(self: JoinRequest): Promise<void> {
    this.self = self;
    this.logger = (this.options.logger ?? self.logger ?? NOOP_LOGGER).child({ component: 'etcd' });
    this.foreignClaims = new LogThrottle(this.logger, FOREIGN_LOG_INTERVAL_MS, undefined, 4);
    this.keys = new EtcdKeys(this.options.prefix, self.cluster);
    const etcdOptions: IOptions = {
      ...this.options.etcd,
      hosts: this.options.endpoints,
      grpcOptions: { ...GRPC_CHANNEL_OPTIONS, ...this.options.etcd?.grpcOptions },
      faultHandling: {
        // With one endpoint there is nowhere else to go: skipping it would only fail calls.
        host: () =>
          (this.options.endpoints.length > 1 ? hostCooldownPolicy() : PASS_THROUGH_POLICY) as never,
        global: PASS_THROUGH_POLICY as never,
        ...this.options.etcd?.faultHandling,
      },
    };
    const client = new Etcd3(etcdOptions);
    this.client = client;
    const budget = new JoinBudget(this.options.joinTimeoutMs, this.options.requestTimeoutMs);
    // The lease thread boots while the lease is granted and the member key written, not after.
    LeaseThread.get().warm();
    try {
      await this.registration.register(budget);
      const watch = new EtcdTopologyWatch(
        this.client,
        this.keys,
        this.logger,
        this.options.requestTimeoutMs,
        self.id,
      );
      watch.topologyListeners.add((t) => this.topologyListeners.emit(t));
      watch.noteListeners.add((n) => this.receiveNote(n));
      // Retried like the registration, with a budget of its own (the registration renewed it):
      // in a join storm (128 members starting at once) etcd may answer the first read after the
      // request deadline, and one slow read must not fail a join that already registered.
      await retryUntil(budget, (timeoutMs) => watch.start(timeoutMs), {
        what: 'read the topology',
        endpoints: this.options.endpoints,
        joinTimeoutMs: this.options.joinTimeoutMs,
        logger: this.logger,
        stopped: () => this.stopped,
      });
      this.watch = watch;
      this.compactor = new EtcdCompactor(
        () => this.requireClient('compact'),
        self.id,
        () => this.topology(),
        this.options.historyRetentionMs,
        this.options.requestTimeoutMs,
        this.logger,
      );
      this.compactor.start();
    } catch (err) {
      // Registered but not joined: stop keeping the lease and revoke it, or the lease thread
      // would keep a member key alive that no member stands behind (others would place ranges
      // on it that nobody claims).
      await this.registration.revoke(client).catch(() => undefined);
      await this.teardown();
      throw err;
    }
  }

  async markLeaving(): Promise<void> {
    this.status = 'leaving';
    const lease = this.registration.current();
    // Fenced: the registration writes the new status when it is back (same lease or new one).
    if (!lease || !lease.valid()) return;
    await this.requireClient('markLeaving').kv.put(
      {
        key: this.requireKeys('markLeaving').member(this.requireSelf('markLeaving').id),
        value: this.memberValue(),
        lease: lease.id,
      },
      { deadline: Date.now() + this.options.requestTimeoutMs },
    );
  }

  async leave(): Promise<void> {
    if (!this.client || this.stopped) return;
    this.stopped = true;
    await this.registration.revoke(this.client).catch((err) => {
      this.logger.warn(
        { err },
        'could not revoke the lease on leave; its keys expire with the TTL',
      );
    });
    await this.teardown();
  }

  topology(): Topology {
    return this.watch?.topology() ?? { version: 0, members: [] };
  }

  onTopology(listener: (t: Topology) => void): () => void {
    return this.topologyListeners.add(listener);
  }

  async claim(kind: string, shard: number, wanted?: () => boolean): Promise<ClaimResult> {
    this.requireClient('claim');
    const self = this.requireSelf('claim');
    const lease = this.registration.current();
    if (!lease || !lease.valid()) throw new LeaseLostError(`claim ${kind}/${shard}`);
    const key = this.requireKeys('claim').shard(kind, shard);
    const value = encodeClaim({ member: self.id, incarnation: this.registration.incarnation });
    try {
      return await this.batcher.claim(key, value, lease.id, wanted);
    } catch (err) {
      if (isLeaseNotFound(err)) {
        this.registration.gone(lease, 'etcd rejected a claim: lease not found');
        throw new LeaseLostError(`claim ${kind}/${shard}`, { cause: err });
      }
      throw err;
    }
  }

  async release(kind: string, shard: number, epoch: number, to?: string): Promise<void> {
    this.requireClient('release');
    const self = this.requireSelf('release');
    const note =
      to !== undefined && to !== self.id
        ? { to, item: [kind, shard, epoch] as [string, number, number] }
        : undefined;
    await this.batcher.release(this.requireKeys('release').shard(kind, shard), epoch, note);
  }

  onClaimReleased(listener: (e: ClaimReleased) => void): () => void {
    return this.releaseListeners.add(listener);
  }

  onLeaseHealth(listener: (e: LeaseHealth) => void): () => void {
    return this.registration.healthListeners.add(listener);
  }

  leaseValid(): boolean {
    return this.registration.valid();
  }

  async heldClaims(): Promise<HeldClaims> {
    const client = this.requireClient('heldClaims');
    const keys = this.requireKeys('heldClaims');
    const lease = this.registration.currentId();
    if (lease === undefined) throw new LeaseLostError('heldClaims');
    const res = await client.leaseClient.leaseTimeToLive(
      { ID: lease, keys: true },
      { deadline: Date.now() + this.options.requestTimeoutMs },
    );
    const claims: HeldClaims['claims'] = [];
    for (const key of res.keys ?? []) {
      const parsed = keys.parse(Buffer.from(key));
      if (parsed?.type === 'shard') claims.push({ kind: parsed.kind, shard: parsed.shard });
    }
    return { revision: Number(res.header.revision), claims };
  }

  async releaseStray(kind: string, shard: number): Promise<void> {
    const lease = this.registration.currentId();
    if (lease === undefined) throw new LeaseLostError(`releaseStray ${kind}/${shard}`);
    await this.batcher.releaseStray(this.requireKeys('releaseStray').shard(kind, shard), lease);
  }

  askToLetGo(member: string): void {
    const lease = this.registration.currentId();
    const self = this.self;
    if (lease === undefined || !self || !this.keys) return;
    const key = this.keys.note(member, self.id);
    this.requireClient('askToLetGo')
      .kv.put({ key, value: encodeNote({ letGo: true }), lease })
      .catch((err: unknown) =>
        this.logger.debug({ err, member }, 'could not ask a member to let go of its claims'),
      );
  }

  onLetGoAsked(listener: (from: string) => void): () => void {
    return this.letGoListeners.add(listener);
  }

  /**
   * A note from another member: hand-offs become claim-released events (the waiting member claims
   * at once), a let-go request asks the audit to run. The note is then deleted (only if not
   * rewritten meanwhile), so notes do not pile up in etcd.
   */
  private receiveNote(n: ReceivedNote): void {
    for (const [kind, shard, epoch] of n.note.released ?? []) {
      this.releaseListeners.emit({ kind, shard, epoch, handOff: true });
    }
    if (n.note.letGo) this.letGoListeners.emit(n.from);
    this.client?.kv
      .txn(
        {
          compare: [{ key: n.key, target: 'Mod', result: 'Equal', mod_revision: n.modRevision }],
          success: [{ request_delete_range: { key: n.key } }],
        },
        { deadline: Date.now() + this.options.requestTimeoutMs },
      )
      .catch((err: unknown) => this.logger.debug({ err }, 'could not delete a note; it stays'));
  }

  /**
   * The etcd KV calls claims and releases go through. A seam for fault tests (a reply lost after
   * etcd applied the transaction); production code never overrides it.
   */
  protected kv(): EtcdTxnCalls {
    return this.requireClient('claim').kv;
  }

  private memberValue(): Buffer {
    const self = this.requireSelf('join');
    return encodeMember({
      id: self.id,
      address: self.address,
      kinds: self.kinds,
      kindShards: self.kindShards,
      status: this.status,
    });
  }

  private async teardown(): Promise<void> {
    this.stopped = true;
    LeaseThread.get().idle();
    this.compactor?.stop();
    this.foreignClaims.close();
    await this.watch?.stop();
    this.watch = undefined;
    this.client?.close();
    this.client = undefined;
  }

  private requireClient(operation: string): Etcd3 {
    if (!this.client || this.stopped) throw new NotJoinedError(operation);
    return this.client;
  }

  private requireSelf(operation: string): JoinRequest {
    if (!this.self) throw new NotJoinedError(operation);
    return this.self;
  }

  private requireKeys(operation: string): EtcdKeys {
    if (!this.keys) throw new NotJoinedError(operation);
    return this.keys;
  }
}

function isLeaseNotFound(err: unknown): boolean {
  return (err as Error)?.name === 'EtcdLeaseInvalidError' || /lease not found/.test(String(err));
}
