import { AbortError } from '@granary/core';
import {
  ClusterStoppedError,
  DeadlineExceededError,
  MemberFencedError,
  NoHostError,
} from '../../errors';
import type { CallerLoad } from '../../overload/caller-load';
import type { OverloadedError } from '../../overload/errors';
import type { CallerDeps } from './caller-deps';
import { setbackOf, type Setback } from './call-outcome';
import type { GrainCall } from './grain-call';
import type { GrainRef, LocalRoutes } from './grain-refs';
import type { OwnerLookup } from './owner-lookup';
import { silentOwner } from './silent-owner';
import { Sleepers } from './sleepers';

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

/**
 * The one retry loop of grain calls: a call whose first attempt did not end with the grain's
 * answer goes on here, with that attempt's classification (`setbackOf`), and is tried again
 * with backoff until the grain answers, a final error, or its deadline. The first attempt of
 * every call runs outside it (GrainCaller.request), so a call answered at once pays no async
 * frame.
 */
export class RetryLoop {
  /** The calls sleeping between attempts (bounded by the calls in progress). */
  private readonly sleepers: Sleepers;

  constructor(
    private readonly deps: CallerDeps,
    private readonly owners: OwnerLookup,
    private readonly load: CallerLoad,
    private readonly routes: LocalRoutes,
  ) {
    this.sleepers = new Sleepers(deps.clock);
  }

  /**
   * The topology changed: the calls sleeping between attempts wake at once and restart their
   * backoff, so a new owner is tried as soon as it is known.
   */
  wakeAll(): void {
    this.sleepers.wakeAll();
  }

  /** The retry loop of a call that did not end with its first attempt (counted outstanding). */
  async run<T>(call: GrainCall, first: Setback | undefined): Promise<T> {
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
        const now = clock.monotonic();
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
                ...this.owners.hostDetails(kind),
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
        const address = hint ?? this.owners.ownerOf(ref);
        hint = undefined;
        noHost = address === undefined;
        // A retry to an owner that sheds load goes through its throttle like a first attempt:
        // the throttle counts every attempt sent there, and refusing here costs the owner nothing.
        const held = address === undefined ? undefined : this.heldBackRetry(ref, address, now);
        if (held !== undefined) setback = { kind: 'overloaded', error: held };
        else if (address !== undefined) setback = this.silent(ref, address);
        if (setback === undefined && address !== undefined) {
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
          this.load.outcome(address, error, clock.monotonic());
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
            const now = clock.monotonic();
            // No retry the deadline cannot see answered, and none beyond the member's budget.
            if (deadline - now < wait + (now - attemptStart)) throw setback.error;
            if (!this.load.budget.tryRetry(now)) throw setback.error;
            spent++;
            break;
          }
          case 'retry':
            // A hint naming a member this caller knows has left (a replier whose topology lags)
            // would hold the call on a dead member until its deadline: the topology decides.
            hint =
              setback.hint !== undefined && this.owners.listed(setback.hint)
                ? setback.hint
                : undefined;
        }
        last = setback.error;
        // A call held back from a silent owner was not sent: no retry to count.
        const sent = setback.kind !== 'retry' || setback.held !== true;
        if (sent && call.observation !== undefined) this.deps.calls?.retried(call, last, attempts);
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
      const left = deadline - clock.monotonic();
      const topologyChanged = await this.sleepers.sleep(Math.min(jittered, Math.max(1, left)));
      // A new topology may name a new owner that is claiming the shard now: short waits again.
      backoff = topologyChanged ? INITIAL_BACKOFF_MS : Math.min(backoff * 2, maxBackoff);
    }
  }

  /** The owner at `address` reads nothing of its link: the hold's setback (see silentOwner). */
  private silent(ref: GrainRef, address: string): Setback | undefined {
    const silence = address === ref.address ? ref.silence : this.owners.silenceOf(address);
    return silentOwner(address, silence);
  }

  /** The throttle of `address` holds this retry back: the error, else undefined. */
  private heldBackRetry(ref: GrainRef, address: string, now: number): OverloadedError | undefined {
    const throttle = address === ref.address ? ref.throttle : this.load.throttleOf(address);
    if (throttle === undefined) return undefined;
    return this.load.heldBack(throttle, address, ref.kind, ref.identity, now);
  }
}
