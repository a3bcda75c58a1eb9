import { performance } from 'node:perf_hooks';
import {
  InvalidOptionError,
  LogThrottle,
  PID,
  Props,
  type ActorSystem,
  type Context,
} from '@granary/core';
import { peerAddressOf } from '@granary/core/internal';
import {
  ClusterError,
  JoinRefusedError,
  JoinTimeoutError,
  LeaseLostError,
  NotJoinedError,
} from '../../errors';
import { TickBatch } from '../../internal/tick-batch';
import { Listeners } from '../../internal/listeners';
import { NOOP_LOGGER, type ClusterLogger } from '../../internal/logger';
import { EMPTY_TOPOLOGY, type MemberStatus, type Topology } from '../../membership/topology';
import type {
  ClaimReleased,
  ClaimResult,
  ClusterProvider,
  JoinRequest,
  LeaseHealth,
} from '../cluster-provider';
import {
  resolveSeedProviderOptions,
  type ResolvedSeedProviderOptions,
  type SeedProviderOptions,
} from './seed-provider-options';
import {
  SEED_ACTOR_NAME,
  type SeedClaimReply,
  type SeedClaimsReply,
  type SeedHeartbeatReply,
  type SeedJoinReply,
  type SeedPush,
  type SeedRequest,
} from './seed-protocol';
import { isHandshakeRefusal, MemberIdHeldError } from './seed-join-errors';
import { SeedTable } from './seed-table-actor';
import { topologyProblem } from './seed-request-check';
import { memberProblem } from '../../membership/member-record';

/** The member stops trusting its lease this fraction of the TTL before the seed could expire it. */
const SAFETY_MARGIN_FRACTION = 0.25;
/** How often the member checks its lease with no traffic (catches a wake-up from a blocked loop). */
const VALIDITY_CHECK_MS = 100;
/** First retry delay of a join while the seed is unreachable. */
const JOIN_BACKOFF_INITIAL_MS = 100;
/** Cap of the join backoff. */
const JOIN_BACKOFF_MAX_MS = 1000;
/** Refused pushes are logged once per this, then as a count (a peer may send thousands a frame). */
const REFUSED_PUSH_LOG_INTERVAL_MS = 10_000;

/**
 * Development clustering with no dependencies (like Orleans' localhost clustering): one node, the
 * seed, keeps the membership table in an actor; the others join it over the remote transport and
 * heartbeat. A member silent for the TTL is removed and its claims freed; claims are granted by
 * the seed. Same lease semantics as EtcdProvider (self-fencing, re-join with a new incarnation).
 * When the seed dies the cluster has no membership: members fence and keep trying to re-join.
 *
 * @example
 * // seed node (fixed port)
 * await Cluster.start({ name: 'dev', provider: new SeedProvider({ isSeed: true }),
 *   remote: { host: '127.0.0.1', port: 4100 }, kinds: [] });
 * // every other node
 * await Cluster.start({ name: 'dev', provider: new SeedProvider({ seed: '127.0.0.1:4100' }),
 *   remote: { host: '127.0.0.1', port: 0 }, kinds: [ponger] });
 */
export class SeedProvider implements ClusterProvider {
  private readonly options: ResolvedSeedProviderOptions;
  /** Its own logger if given, else the member's (set at join). */
  private logger: ClusterLogger;
  private system: ActorSystem | undefined;
  private self: JoinRequest | undefined;
  private seedPid: PID | undefined;
  private listener: PID | undefined;
  private table: SeedTable | undefined;
  private status: MemberStatus = 'up';
  private leaseId = 0;
  private ttlMs = 0;
  private validUntil = 0;
  private lost = true;
  private stopped = false;
  private current: Topology = EMPTY_TOPOLOGY;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private readonly topologyListeners = new Listeners<Topology>();
  private readonly releaseListeners = new Listeners<ClaimReleased>();
  private readonly healthListeners = new Listeners<LeaseHealth>();
  /** Ids of malformed members already logged. */
  private readonly malformed = new Set<string>();
  /** Pushes refused as not from the seed: any peer can send them, in any number. */
  private refusedPushes: LogThrottle | undefined;

  /** Validates the options at once: a bad one throws InvalidOptionError naming it. */
  constructor(options: SeedProviderOptions = {}) {
    this.options = resolveSeedProviderOptions(options);
    this.logger = this.options.logger ?? NOOP_LOGGER;
  }

  async join(self: JoinRequest): Promise<void> {
    this.logger = (this.options.logger ?? self.logger ?? NOOP_LOGGER).child({ component: 'seed' });
    this.refusedPushes = new LogThrottle(this.logger, REFUSED_PUSH_LOG_INTERVAL_MS);
    const system = self.system;
    if (!system || system.address === 'nonhost') {
      throw new InvalidOptionError(
        'remote',
        'SeedProvider talks over the remote transport: give Cluster.start a remote option',
      );
    }
    this.system = system;
    this.self = self;
    if (this.options.isSeed)
      this.table = new SeedTable(system, self.cluster, this.options.ttlMs, this.logger);
    this.seedPid = new PID(
      this.options.isSeed ? system.address : this.options.seed!,
      SEED_ACTOR_NAME,
    );
    this.listener = system.root.spawn(Props.fromFunc((ctx) => this.onPush(ctx)));
    try {
      await this.joinWithRetry(Date.now() + this.options.joinTimeoutMs);
    } catch (err) {
      this.stop();
      throw err;
    }
    this.heartbeatTimer = setInterval(
      () => void this.heartbeat(),
      this.options.heartbeatIntervalMs,
    );
    this.checkTimer = setInterval(() => this.leaseValid(), VALIDITY_CHECK_MS);
  }

  async markLeaving(): Promise<void> {
    this.status = 'leaving';
    if (this.lost) return; // the re-join carries the status
    await this.request<SeedHeartbeatReply>({
      t: 'seed.status',
      leaseId: this.leaseId,
      status: 'leaving',
    });
  }

  async leave(): Promise<void> {
    if (!this.system || this.stopped) return;
    const leaseId = this.leaseId;
    const wasLost = this.lost;
    this.stop();
    if (!wasLost) {
      await this.request({ t: 'seed.leave', leaseId }).catch((err) => {
        this.logger.warn(
          { err },
          'could not leave through the seed; the member expires with the TTL',
        );
      });
    }
    this.table?.stop();
  }

  topology(): Topology {
    return this.current;
  }

  onTopology(listener: (t: Topology) => void): () => void {
    return this.topologyListeners.add(listener);
  }

  async claim(kind: string, shard: number): Promise<ClaimResult> {
    if (!this.self) throw new NotJoinedError('claim');
    if (!this.leaseValid()) throw new LeaseLostError(`claim ${kind}/${shard}`);
    const leaseId = this.leaseId;
    const reply = await this.claims.add([kind, shard], leaseId);
    if ('lost' in reply) {
      if (leaseId === this.leaseId) this.loseLease('the seed no longer knows the lease');
      throw new LeaseLostError(`claim ${kind}/${shard}`);
    }
    return reply;
  }

  async release(kind: string, shard: number, epoch: number): Promise<void> {
    if (!this.self) throw new NotJoinedError('release');
    await this.releases.add([kind, shard, epoch], 0);
  }

  /** Claims of one turn go to the seed in one request (by lease: a re-join changes it). */
  private readonly claims = new TickBatch<[string, number], SeedClaimReply>(
    async (items, leaseId) =>
      (await this.request<SeedClaimsReply>({ t: 'seed.claims', leaseId, items })).results,
  );

  /** Releases of one turn go to the seed in one request. */
  private readonly releases = new TickBatch<[string, number, number], void>(async (items) => {
    await this.request({ t: 'seed.releases', items });
    return items.map(() => undefined);
  });

  onClaimReleased(listener: (e: ClaimReleased) => void): () => void {
    return this.releaseListeners.add(listener);
  }

  onLeaseHealth(listener: (e: LeaseHealth) => void): () => void {
    return this.healthListeners.add(listener);
  }

  leaseValid(): boolean {
    if (this.lost || this.stopped) return false;
    if (performance.now() < this.validUntil) return true;
    this.loseLease('no heartbeat answered within the TTL minus the safety margin');
    return false;
  }

  private async joinWithRetry(deadline: number): Promise<void> {
    let delay = JOIN_BACKOFF_INITIAL_MS;
    let waitSaid = false;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.register();
        return;
      } catch (err) {
        const held = MemberIdHeldError.is(err);
        if (this.stopped || (err instanceof ClusterError && !held)) throw err;
        const seed = this.seedPid!.address;
        if (isHandshakeRefusal(err)) {
          throw new JoinRefusedError(
            `the seed at ${seed} refused cluster '${this.self?.cluster}': ${(err as Error).message}`,
            { cause: err },
          );
        }
        if (Date.now() + delay >= deadline) {
          throw new JoinTimeoutError(
            `could not join cluster '${this.self?.cluster}' through the seed at ${seed} within ` +
              `${this.options.joinTimeoutMs} ms (joinTimeoutMs) after ${attempt} attempts: ${(err as Error).message}`,
            { cause: err },
          );
        }
        if (!held) {
          this.logger.warn(
            { err, seed, attempt },
            `cannot reach the seed at ${seed}; retrying in ${delay} ms`,
          );
        } else if (!waitSaid) {
          waitSaid = true; // said once, at warn: two live processes with one id is a mistake
          this.logger.warn({ seed, attempt }, `join waits: ${(err as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, JOIN_BACKOFF_MAX_MS);
      }
    }
  }

  private async register(): Promise<void> {
    const self = this.self!;
    const sentAt = performance.now();
    const reply = await this.request<SeedJoinReply>({
      t: 'seed.join',
      cluster: self.cluster,
      id: self.id,
      address: self.address,
      kinds: self.kinds,
      kindShards: self.kindShards,
      status: this.status,
      listener: { address: this.listener!.address, id: this.listener!.id },
    });
    if (!reply.ok && reply.held === true) throw new MemberIdHeldError(reply.error);
    if (!reply.ok) throw new JoinRefusedError(`the seed refused the join: ${reply.error} (name)`);
    if (this.stopped) return;
    this.leaseId = reply.leaseId;
    this.ttlMs = reply.ttlMs;
    this.validUntil = sentAt + this.trustMs();
    this.lost = false;
    this.applyTopology(reply.topology);
  }

  private async heartbeat(): Promise<void> {
    if (this.lost || this.stopped) return;
    const leaseId = this.leaseId;
    const sentAt = performance.now();
    try {
      const reply = await this.request<SeedHeartbeatReply>({
        t: 'seed.heartbeat',
        leaseId,
        version: this.current.version,
      });
      if (leaseId !== this.leaseId || this.lost) return;
      if (!reply.alive) {
        this.loseLease('the seed reports the lease expired');
        return;
      }
      this.validUntil = Math.max(this.validUntil, sentAt + this.trustMs());
      if (reply.topology) this.applyTopology(reply.topology);
    } catch (err) {
      this.logger.debug({ err }, 'seed heartbeat failed');
    }
  }

  /** Fence now (listeners from a microtask), then re-join with a new lease in the background. */
  private loseLease(cause: string): void {
    if (this.lost || this.stopped) return;
    this.lost = true;
    const old = this.leaseId;
    this.logger.warn({ lease: old, cause }, 'seed lease lost: fencing and re-joining');
    queueMicrotask(() => this.healthListeners.emit('lease-lost'));
    // Free the old claims at once if the seed still has the lease (e.g. a blocked loop).
    void this.request({ t: 'seed.leave', leaseId: old }).catch(() => undefined);
    void this.joinWithRetry(Number.POSITIVE_INFINITY).then(
      () => {
        if (!this.stopped) this.healthListeners.emit('lease-restored');
      },
      (err) => this.logger.debug({ err }, 're-join stopped'),
    );
  }

  /** A push of the seed's: taken only from the seed this member joined, and well formed. */
  private onPush(ctx: Context): void {
    const m = ctx.message as SeedPush;
    if (typeof m !== 'object' || m === null) return;
    if (m.t !== 'seed.topology' && m.t !== 'seed.released') return;
    const seed = this.seedPid!;
    const sender = ctx.sender;
    const from =
      sender && (peerAddressOf(sender) ?? (this.options.isSeed ? sender.address : undefined));
    if (sender === undefined || from !== seed.address || sender.id !== seed.id) {
      this.refusedPushes?.log(
        'not-from-seed',
        'warn',
        { sender: sender?.toString().slice(0, 256) },
        'seed push refused: not from the seed',
      );
      return;
    }
    if (m.t === 'seed.topology') this.applyTopology(m.topology);
    else if (m.t === 'seed.released' && Array.isArray(m.items)) {
      for (const item of m.items) {
        if (!Array.isArray(item)) continue;
        const [kind, shard, epoch] = item;
        if (typeof kind === 'string' && Number.isInteger(shard) && Number.isSafeInteger(epoch))
          this.releaseListeners.emit({ kind, shard, epoch });
      }
    }
  }

  private applyTopology(t: Topology): void {
    if (this.stopped) return;
    const problem = topologyProblem(t);
    if (problem !== undefined && !(Array.isArray(t?.members) && Number.isSafeInteger(t.version))) {
      this.logger.warn({ problem }, 'seed topology refused: malformed');
      return;
    }
    if (t.version <= this.current.version) return;
    // A malformed member is left out (and logged once), never handed to placement.
    const members = t.members.filter((m) => {
      const p = memberProblem(m);
      if (p === undefined) return true;
      const key = String((m as { id?: unknown } | null)?.id);
      if (!this.malformed.has(key)) {
        this.malformed.add(key);
        this.logger.warn(
          { member: key.slice(0, 64), problem: p },
          'seed: malformed member left out of the topology',
        );
      }
      return false;
    });
    this.current = Object.freeze({ version: t.version, members: Object.freeze(members) });
    this.topologyListeners.emit(this.current);
  }

  private request<T = unknown>(message: SeedRequest): Promise<T> {
    const system = this.system;
    if (!system || !this.seedPid) return Promise.reject(new NotJoinedError(message.t));
    return system.root.request<T>(this.seedPid, message, {
      timeoutMs: this.options.requestTimeoutMs,
    });
  }

  private trustMs(): number {
    return this.ttlMs * (1 - SAFETY_MARGIN_FRACTION);
  }

  private stop(): void {
    this.stopped = true;
    clearInterval(this.heartbeatTimer);
    clearInterval(this.checkTimer);
    if (this.listener) this.system?.root.stop(this.listener);
    this.topologyListeners.clear();
    this.releaseListeners.clear();
  }
}
