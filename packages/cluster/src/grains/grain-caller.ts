import {
  AbortError,
  InvalidArgumentError,
  UnknownKindError,
  type ActorSystem,
  type Clock,
  type PID,
  type RandomSource,
} from '@granary/core';
import {
  ClusterStoppedError,
  DeadlineExceededError,
  MemberFencedError,
  NoHostError,
  NoTransportError,
} from '../errors';
import type { Topology } from '../membership/topology';
import { CallerLoad } from '../overload/caller-load';
import type { OverloadedError } from '../overload/errors';
import type { ResolvedOverloadOptions } from '../overload/overload-options';
import type { OverloadCounters } from '../overload/overload-stats';
import type { RetryBudget } from '../overload/retry-budget';
import { ownerOf } from '../placement/owner-of';
import { shardOf } from '../placement/shard-of';
import type { ParentCall } from './deadlock-detection';
import type { GrainCallOptions } from './grain';
import type { CallTelemetry } from '../telemetry/call-telemetry';
import { outcomeOf, setbackOf, type Setback } from './internal/call-outcome';
import { callHeader, withTraceContext } from './internal/call-headers';
import { GrainCall, type CallRetrier } from './internal/grain-call';
import { GrainRefs, LocalRoutes, type GrainRef } from './internal/grain-refs';
import { KindHosts } from './internal/kind-hosts';
import { Sleepers } from './internal/sleepers';

/** First wait before retrying a placement or transport failure: a claim takes a few ms. */
const INITIAL_BACKOFF_MS = 5;
/** Longest wait between attempts: short enough to notice a new owner within ~0.1 s. */
const MAX_BACKOFF_MS = 100;
/**
 * First wait after OverloadedError: a saturated owner needs longer than a claim to recover, and
 * its queue is kept about loadShedding.targetMs (50 ms) long for calls with deadlines of 1 s.
 */
const OVERLOAD_BACKOFF_MS = 25;
/** Longest wait between attempts refused by overload. */
const MAX_OVERLOAD_BACKOFF_MS = 400;

/** What the caller needs from its cluster member. */
export interface CallerDeps {
  readonly system: ActorSystem;
  /** This member's id (named by the OverloadedError of maxOutstandingCalls). */
  readonly memberId: string;
  /** maxOutstandingCalls and the retry budget. */
  readonly overload: ResolvedOverloadOptions;
  /** The member's overload counters (outstanding calls, refusals, drops). */
  readonly counters: OverloadCounters;
  /** The deadline of a call that does not set `timeoutMs` (the cluster's requestTimeoutMs). */
  readonly defaultTimeoutMs: number;
  /** The member's latest topology. */
  topology(): Topology;
  shardCountOf(kind: string): number;
  onSendFailed(kind: string, identity: string, error: unknown): void;
  /** True once the member's actor system shuts down: calls from it end at once. */
  stopped(): boolean;
  /** Deadlines, their checks and the waits between attempts (the system's clock). */
  readonly clock: Clock;
  /** Backoff jitter (the system's random source). */
  readonly random: RandomSource;
  /** True while this member itself is fenced (its lease is lost or not provably alive). */
  membershipUnavailable(): boolean;
  /**
   * The caller has no transport to other nodes (a Cluster started without `remote`): a call
   * whose owner is elsewhere fails at once with NoTransportError.
   * @default false
   */
  readonly noTransport?: boolean;
  /** Spans and metrics of the calls (none when absent). */
  readonly calls?: CallTelemetry | undefined;
}

/**
 * Grain calls from anywhere (a member, an actor, a grain): route by identity to the owner of
 * the grain's shard, and retry what a retry can fix inside the call's deadline. The one retry
 * loop of a grain call is here; what each attempt's outcome means is decided in one place,
 * `setbackOf`. A send is acknowledged by the owner's router once the message is in an
 * activation's mailbox (or held for the next one), so it survives moves like a request.
 */
export class GrainCaller implements CallRetrier {
  /** The grains this member calls: shard, owner and PID, resolved once per topology. */
  private readonly refs = new GrainRefs();
  private readonly routes: LocalRoutes;
  /** The calls sleeping between attempts (bounded by the calls in progress). */
  private readonly sleepers: Sleepers;
  /** Which kinds this member has seen hosted, and which of their hosts dropped out. */
  private readonly hosts = new KindHosts();
  /** Outstanding calls, retry budget, owners' throttles. */
  private readonly load: CallerLoad;

  constructor(private readonly deps: CallerDeps) {
    this.routes = new LocalRoutes(deps.system);
    this.load = new CallerLoad(deps.overload, deps.counters, deps.random, deps.memberId, () =>
      deps.clock.monotonic(),
    );
    this.sleepers = new Sleepers(deps.clock);
  }

  /** Retries after OverloadedError (and counted re-sends) as a share of the calls made. */
  get budget(): RetryBudget {
    return this.load.budget;
  }

  /**
   * One call; see Cluster.request. The first attempt runs without the retry loop (no async frame
   * per call, and its reply settles the call's promise directly): only an attempt that did not
   * end with the grain's answer enters the loop, with its classification. With
   * maxOutstandingCalls calls in flight it fails at once with OverloadedError (no stack, nothing
   * allocated but the error and its rejected promise); held back from an owner that sheds load
   * (OwnerThrottle), it goes to the retry loop as if the owner had refused it, or fails at once
   * when the retry budget has no room.
   */
  request<T>(
    kind: string,
    identity: string,
    message: unknown,
    options: GrainCallOptions | undefined,
    parent: ParentCall | undefined,
    ack = false,
    replyTo?: PID,
  ): Promise<T> {
    const full = this.load.full(kind, identity);
    if (full !== undefined) return Promise.reject(full);
    let call: GrainCall;
    let address: string | undefined;
    try {
      call = this.prepare(kind, identity, message, options, parent, ack, replyTo);
      address = this.firstAddress(call);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (address !== undefined) {
      const held = this.load.heldBack(call.ref.throttle!, address, kind, identity, call.start);
      if (held !== undefined) {
        // As if the owner had refused it: the retry loop's backoff, budget and deadline decide
        // whether it is tried later. With no budget left it fails at once, without the loop.
        if (!this.budget.hasRoom(call.start)) return Promise.reject(held);
        this.deps.counters.outstanding++;
        call.address = address;
        return this.observed(call, this.loop<T>(call, { kind: 'overloaded', error: held }));
      }
    }
    this.deps.counters.outstanding++;
    if (address === undefined) return this.observed(call, this.loop<T>(call, undefined));
    const promise = call.promise<T>();
    call.address = address;
    // The call is its own request options (timeout, signal, header) and its reply's sink.
    this.deps.system.root.requestTo(call.ref.pidAt(address, this.routes), message, call, call);
    return promise;
  }

  /** Fire and forget with delivery retried inside the default deadline; failures are logged. */
  send(
    kind: string,
    identity: string,
    message: unknown,
    parent: ParentCall | undefined,
    replyTo?: PID,
  ): void {
    this.request(kind, identity, message, undefined, parent, true, replyTo).catch((err: unknown) =>
      this.deps.onSendFailed(kind, identity, err),
    );
  }

  /** A call's first attempt did not end with the grain's answer (CallRetrier). */
  retry(call: GrainCall, first: Setback): Promise<unknown> {
    this.load.outcome(call.address, first.error, this.deps.clock.now());
    if (first.kind === 'deadline') {
      // Final (as in the retry loop), and frequent under overload: failed without the loop's
      // async frame.
      this.deps.counters.outstanding--;
      const { kind, identity } = call;
      const error = DeadlineExceededError.of(kind, identity, call.deadline - call.start, 1, {
        cause: first.error,
      });
      return this.observed(call, Promise.reject(error));
    }
    return this.observed(call, this.loop(call, first));
  }

  /** CallRetrier: an observed call's first attempt got the grain's answer. */
  answered(call: GrainCall): void {
    this.deps.calls?.ended(call, undefined, 'ok');
  }

  /** `outcome`, with the call's end reported to its telemetry when it is observed. */
  private observed<T>(call: GrainCall, outcome: Promise<T>): Promise<T> {
    const calls = this.deps.calls;
    if (call.observation === undefined || calls === undefined) return outcome;
    return outcome.then(
      (reply) => {
        calls.ended(call, undefined, 'ok');
        return reply;
      },
      (err: Error) => {
        calls.ended(call, err, outcomeOf(err));
        throw err;
      },
    );
  }

  /** See Cluster.canCall. */
  canCall(timeoutMs: number | undefined): boolean {
    return this.load.admits(timeoutMs ?? this.deps.defaultTimeoutMs);
  }

  /** Stops the caller's timers (the member stops). */
  close(): void {
    this.load.close();
  }

  /** CallRetrier: the member is shutting down. */
  stopping(): boolean {
    return this.deps.stopped();
  }

  /** CallRetrier: a call answered by its first attempt. */
  ended(call: GrainCall): void {
    this.deps.counters.outstanding--;
    call.ref.throttle?.accepted();
  }

  /**
   * The member's topology changed (a dead member dropped, a member joined): grain references
   * let go of the old topology, and the calls sleeping between attempts wake at once and restart
   * their backoff, so a new owner is tried as soon as it is known instead of after the rest of a
   * backoff of up to 150 ms.
   */
  topologyChanged(): void {
    this.hosts.topologyChanged(this.deps.topology());
    this.refs.topologyChanged();
    this.sleepers.wakeAll();
  }

  /** Checks the arguments and fixes what every attempt of the call shares. */
  private prepare(
    kind: string,
    identity: string,
    message: unknown,
    options: GrainCallOptions | undefined,
    parent: ParentCall | undefined,
    ack: boolean,
    replyTo: PID | undefined,
  ): GrainCall {
    if (typeof kind !== 'string' || kind.length === 0) {
      throw new InvalidArgumentError('kind', `must be a non-empty string, got ${String(kind)}`);
    }
    if (typeof identity !== 'string') {
      throw new InvalidArgumentError('identity', `must be a string, got ${typeof identity}`);
    }
    const timeoutMs = options?.timeoutMs ?? this.deps.defaultTimeoutMs;
    if (!(timeoutMs > 0)) {
      throw new InvalidArgumentError('options.timeoutMs', `must be > 0, got ${timeoutMs}`);
    }
    const retries = options?.retries;
    if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0)) {
      throw new InvalidArgumentError('options.retries', `must be an integer >= 0, got ${retries}`);
    }
    const start = this.deps.clock.now();
    this.budget.callStarted(start);
    const deadline = Math.min(start + timeoutMs, parent?.deadline ?? Infinity);
    const call = new GrainCall(
      this,
      this.refs.get(kind, identity) ??
        this.refs.add(kind, identity, shardOf(identity, this.deps.shardCountOf(kind))),
      message,
      options,
      start,
      deadline,
      callHeader(parent?.chainId, parent?.path, ack, replyTo),
    );
    const calls = this.deps.calls;
    const trace = parent?.trace ?? options?.traceContext;
    if (calls !== undefined && calls.on) calls.begin(call, trace);
    else if (trace !== undefined) call.header = withTraceContext(call.header, trace);
    return call;
  }

  /**
   * The owner to try first, or undefined when the call must go through the retry loop's checks
   * (aborted, stopped, deadline already passed, no owner yet). Throws UnknownKindError.
   */
  private firstAddress(call: GrainCall): string | undefined {
    if (call.signal?.aborted || this.deps.stopped() || call.deadline <= call.start)
      return undefined;
    return this.ownerOf(call.ref);
  }

  /** The throttle of `address` holds this retry back: the error, else undefined. */
  private heldBackRetry(ref: GrainRef, address: string, now: number): OverloadedError | undefined {
    const throttle = address === ref.address ? ref.throttle : this.load.throttleOf(address);
    if (throttle === undefined) return undefined;
    return this.load.heldBack(throttle, address, ref.kind, ref.identity, now);
  }

  /** The grain's owner under the current topology (resolved once per topology and grain). */
  private ownerOf(ref: GrainRef): string | undefined {
    const topology = this.deps.topology();
    if (ref.topology !== topology) {
      const address = this.ownerAddress(ref.kind, ref.shard);
      // Without a remote only this node's own grains are reachable (once per topology and grain).
      if (
        this.deps.noTransport === true &&
        address !== undefined &&
        address !== this.deps.system.address
      ) {
        throw new NoTransportError(ref.kind, ref.identity, address);
      }
      ref.resolve(
        topology,
        address,
        address === undefined ? undefined : this.load.throttleOf(address),
      );
    }
    return ref.address;
  }

  /** Whether the member's topology lists a member at `address`. */
  private listed(address: string): boolean {
    return this.deps.topology().members.some((m) => m.address === address);
  }

  /** The retry loop of a call that did not end with its first attempt (counted outstanding). */
  private async loop<T>(call: GrainCall, first: Setback | undefined): Promise<T> {
    try {
      return await this.tryAgain<T>(call, first);
    } finally {
      this.deps.counters.outstanding--;
    }
  }

  /**
   * Handles `first` (the first attempt's setback) if given, then tries again with backoff until
   * the grain answers, a final error, or the deadline. After OverloadedError (and for re-sends
   * counted against `retries`) it tries again only if the member's retry budget has room and the
   * deadline leaves time for the wait and another attempt as long as the last one; else the
   * call fails with that error.
   */
  private async tryAgain<T>(call: GrainCall, first: Setback | undefined): Promise<T> {
    const { kind, identity, message, signal, start, deadline, ref } = call;
    const clock = this.deps.clock;
    let setback = first;
    let attempts = first === undefined ? 0 : 1;
    let spent = 0;
    let last: Error | undefined;
    let hint: string | undefined;
    let followedHint = false;
    let backoff = INITIAL_BACKOFF_MS;
    let maxBackoff = MAX_BACKOFF_MS;
    /** When the last attempt was sent (how long an attempt takes, for the deadline check). */
    let attemptStart = start;
    // The call found no member able to take it (no owner, or a fenced one) on its last try.
    let noHost = false;
    let fencedAnswers = 0;
    for (;;) {
      if (setback === undefined) {
        if (signal?.aborted) throw new AbortError(`${kind}/${identity}`, signal.reason);
        if (this.deps.stopped()) throw new ClusterStoppedError(`request to ${kind}/${identity}`);
        const now = clock.now();
        const remaining = deadline - now;
        if (remaining <= 0) {
          this.deps.counters.droppedBeforeSend++;
          if (noHost) {
            throw new NoHostError(
              kind,
              identity,
              deadline - start,
              attempts,
              {
                ...this.hosts.details(kind, this.deps.topology()),
                fencedAnswers,
                membershipUnavailable: this.deps.membershipUnavailable(),
              },
              { cause: last },
            );
          }
          throw DeadlineExceededError.of(kind, identity, deadline - start, attempts, {
            cause: last,
          });
        }
        const address = hint ?? this.ownerOf(ref);
        hint = undefined;
        noHost = address === undefined;
        // A retry to an owner that sheds load goes through its throttle like a first attempt:
        // the throttle counts every attempt sent there, and refusing here costs the owner nothing.
        const held = address === undefined ? undefined : this.heldBackRetry(ref, address, now);
        if (held !== undefined) setback = { kind: 'overloaded', error: held };
        else if (address !== undefined) {
          attempts++;
          call.address = address;
          attemptStart = now;
          let reply: unknown;
          let error: Error | undefined;
          try {
            reply = await this.deps.system.root.request(ref.pidAt(address, this.routes), message, {
              timeoutMs: remaining,
              signal,
              header: call.header,
            });
          } catch (err) {
            error = err as Error;
          }
          setback = setbackOf(call, error, address, error !== undefined && this.deps.stopped());
          this.load.outcome(address, error, clock.now());
          if (setback === undefined) return reply as T;
        }
      }
      let wait: number | undefined;
      if (setback !== undefined) {
        switch (setback.kind) {
          case 'fail':
            throw setback.error;
          case 'deadline':
            throw DeadlineExceededError.of(kind, identity, deadline - start, attempts, {
              cause: setback.error,
            });
          case 'budget':
          case 'overloaded': {
            const overloaded = setback.kind === 'overloaded';
            if (spent >= (call.options?.retries ?? (overloaded ? Infinity : 0)))
              throw setback.error;
            if (overloaded) {
              backoff = Math.max(backoff, OVERLOAD_BACKOFF_MS);
              maxBackoff = MAX_OVERLOAD_BACKOFF_MS;
            }
            wait = backoff * (0.5 + this.deps.random());
            const now = clock.now();
            // No retry the deadline cannot see answered, and none beyond the member's budget.
            if (deadline - now < wait + (now - attemptStart)) throw setback.error;
            if (!this.budget.tryRetry(now)) throw setback.error;
            spent++;
            break;
          }
          case 'retry':
            // A hint naming a member this caller knows has left (a replier whose topology lags)
            // would hold the call on a dead member until its deadline: the topology decides.
            hint =
              setback.hint !== undefined && this.listed(setback.hint) ? setback.hint : undefined;
        }
        last = setback.error;
        if (call.observation !== undefined) this.deps.calls?.retried(call, last, attempts);
        if (MemberFencedError.is(last)) {
          noHost = true;
          fencedAnswers++;
        }
        setback = undefined;
      }
      if (hint !== undefined && !followedHint) {
        followedHint = true; // a fresher owner was named: try it at once, but only once in a row
        continue;
      }
      followedHint = false;
      const jittered = wait ?? backoff * (0.5 + this.deps.random());
      const left = deadline - clock.now();
      const topologyChanged = await this.sleepers.sleep(Math.min(jittered, Math.max(1, left)));
      // A new topology may name a new owner that is claiming the shard now: short waits again.
      backoff = topologyChanged ? INITIAL_BACKOFF_MS : Math.min(backoff * 2, maxBackoff);
    }
  }

  /**
   * The address of the desired owner. Undefined while no up member hosts the kind: its hosts are
   * fenced, leaving, gone or restarting, and the call retries (NoHostError at its deadline).
   * UnknownKindError only for a kind no member has been seen hosting.
   */
  private ownerAddress(kind: string, shard: number): string | undefined {
    const topology = this.deps.topology();
    const owner = ownerOf(kind, shard, topology);
    if (owner !== undefined) return owner.address;
    // An empty view (this member is re-registering) says nothing about the kind: retry.
    if (topology.members.length > 0 && !this.hosts.known(kind, topology)) {
      throw new UnknownKindError(
        kind,
        `unknown grain kind '${kind}': no member has been seen hosting it; register it with kind() in Cluster.start({ kinds })`,
      );
    }
    return undefined;
  }
}
