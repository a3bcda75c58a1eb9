import { InvalidArgumentError, type PID } from '@granary/core';
import { DeadlineExceededError } from '../errors';
import { CallerLoad } from '../overload/caller-load';
import type { RetryBudget } from '../overload/retry-budget';
import { shardOf } from '../placement/shard-of';
import type { ParentCall } from './deadlock-detection';
import type { GrainCallOptions } from './grain';
import { outcomeOf, type Setback } from './internal/call-outcome';
import { strayCallOption } from './internal/call-option-keys';
import { callHeader, withTraceContext } from './internal/call-headers';
import { GrainCall, type CallRetrier } from './internal/grain-call';
import type { CallerDeps } from './internal/caller-deps';
import { GrainRefs, LocalRoutes } from './internal/grain-refs';
import { OwnerLookup } from './internal/owner-lookup';
import { RetryLoop } from './internal/retry-loop';
import { silentOwner } from './internal/silent-owner';

/**
 * Grain calls from anywhere (a member, an actor, a grain): route by identity to the owner of
 * the grain's shard, and retry what a retry can fix inside the call's deadline. The first
 * attempt of every call is made here; one that does not end with the grain's answer goes on in
 * the one retry loop (RetryLoop); what each attempt's outcome means is decided in one place,
 * `setbackOf`. A send is acknowledged by the owner's router once the message is in an
 * activation's mailbox (or held for the next one), so it survives moves like a request.
 */
export class GrainCaller implements CallRetrier {
  /** The grains this member calls: shard, owner and PID, resolved once per topology. */
  private readonly refs = new GrainRefs();
  private readonly routes: LocalRoutes;
  /** Outstanding calls, retry budget, owners' throttles. */
  private readonly load: CallerLoad;
  private readonly owners: OwnerLookup;
  private readonly retries: RetryLoop;

  constructor(private readonly deps: CallerDeps) {
    this.routes = new LocalRoutes(deps.system);
    this.load = new CallerLoad(deps.overload, deps.counters, deps.random, deps.memberId, () =>
      deps.clock.monotonic(),
    );
    this.owners = new OwnerLookup(deps, this.load);
    this.retries = new RetryLoop(deps, this.owners, this.load, this.routes);
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
        return this.observed(call, this.retries.run<T>(call, { kind: 'overloaded', error: held }));
      }
    }
    this.deps.counters.outstanding++;
    if (address === undefined) return this.observed(call, this.retries.run<T>(call, undefined));
    const silence = call.ref.silence;
    if (silence !== undefined && silence.since !== 0) {
      call.address = address;
      const held = silentOwner(address, silence);
      return this.observed(call, this.retries.run<T>(call, held));
    }
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
    this.load.outcome(call.address, first.error, this.deps.clock.monotonic());
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
    return this.observed(call, this.retries.run(call, first));
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
    this.owners.topologyChanged();
    this.refs.topologyChanged();
    this.retries.wakeAll();
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
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') {
        throw new InvalidArgumentError('options', `must be an object, got ${typeof options}`);
      }
      const stray = strayCallOption(options);
      if (stray !== undefined) throw stray;
    }
    const timeoutMs = options?.timeoutMs ?? this.deps.defaultTimeoutMs;
    // typeof first: from JavaScript '100' > 0 holds, and start + '100' is a string.
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0)) {
      const got = typeof timeoutMs === 'string' ? `'${timeoutMs}' (a string)` : String(timeoutMs);
      throw new InvalidArgumentError('options.timeoutMs', `must be a number > 0, got ${got}`);
    }
    const idempotent = options?.idempotent;
    if (idempotent !== undefined && typeof idempotent !== 'boolean') {
      throw new InvalidArgumentError('options.idempotent', `must be a boolean, got ${idempotent}`);
    }
    const retries = options?.retries;
    if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0)) {
      throw new InvalidArgumentError('options.retries', `must be an integer >= 0, got ${retries}`);
    }
    // On the monotonic clock: a wall-clock step must not stretch or cut a call (its retries and
    // backoff are decided against its deadline; a 10 s step back held a 2 s call for 12 s).
    // Deadlines travel between members as time left; a parent's (epoch ms) is converted here.
    const clock = this.deps.clock;
    const start = clock.monotonic();
    this.budget.callStarted(start);
    let deadline = start + timeoutMs;
    if (parent !== undefined) deadline = Math.min(deadline, start + parent.deadline - clock.now());
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
    return this.owners.ownerOf(call.ref);
  }
}
