import {
  AbortError,
  EndpointUnavailableError,
  InvalidArgumentError,
  MailboxFullError,
  type PID,
  TimeoutError,
  UnknownKindError,
  type ActorSystem,
} from '@granary/core';
import {
  ActivationDeniedError,
  CallOutcomeUnknownError,
  ClusterStoppedError,
  DeadlineExceededError,
  DeadlockError,
  GrainError,
  NotOwnerError,
} from '../errors';
import type { Topology } from '../membership/topology';
import { ownerOf } from '../placement/owner-of';
import { shardOf } from '../placement/shard-of';
import type { GrainCallOptions } from './grain';
import { callHeader } from './internal/call-headers';
import { asControl } from './internal/control-replies';
import { GrainCall, type Outcome } from './internal/grain-call';
import { GrainRefs, type GrainRef } from './internal/grain-refs';
import type { ParentCall } from './internal/grain-host';

/** First wait before retrying a placement or transport failure: a claim takes a few ms. */
const INITIAL_BACKOFF_MS = 5;
/** Longest wait between attempts: short enough to notice a new owner within ~0.1 s. */
const MAX_BACKOFF_MS = 100;
/** Error codes of the transport that a retry can fix (peer gone, restarting, not ready). */
const RETRYABLE_CODES = new Set(['ERR_ENDPOINT_UNAVAILABLE', 'ERR_DEAD_LETTER']);

/**
 * True when the call was written to a connection that broke without the peer saying goodbye: it
 * may have reached grain code. Everything else the transport reports (never sent, refused, no
 * router, a peer that left in order after answering what it handled) provably did not.
 */
function outcomeUnknown(err: unknown): boolean {
  return err instanceof EndpointUnavailableError && err.inFlight && !err.peerLeft;
}

/** What the caller needs from its cluster member. */
export interface CallerDeps {
  readonly system: ActorSystem;
  readonly defaultTimeoutMs: number;
  topology(): Topology;
  shardCountOf(kind: string): number;
  onSendFailed(kind: string, identity: string, error: unknown): void;
  /** True once the member's actor system shuts down: calls from it end at once. */
  stopped(): boolean;
  /** This member's own router PID of `kind` (it caches the router process), if it hosts it. */
  localRouter(kind: string): PID | undefined;
}

/**
 * Grain calls from anywhere (a node, an actor, another grain): route by identity to the owner
 * of the shard, retry NotOwner and transport failures with backoff inside the deadline, map the
 * runtime's control replies to typed errors. A send is acknowledged by the owner's router once
 * the message is in an activation's mailbox (or held for the next one), so it survives moves.
 */
export class GrainCaller {
  /** The grains this member calls: shard, owner and PID, resolved once per topology. */
  private readonly refs = new GrainRefs();
  /** Wake-ups of the calls sleeping between attempts (bounded by the calls in progress). */
  private readonly sleepers = new Set<() => void>();

  /** The retry loop, bound once: every call's first attempt hands it on from its reply sink. */
  private readonly retryFrom = (call: GrainCall, first: Outcome): Promise<unknown> =>
    this.retry(call, first);

  constructor(private readonly deps: CallerDeps) {}

  /**
   * One call; see Cluster.request. The first attempt runs without the retry loop (no async frame
   * per call, and its reply settles the call's promise directly): only a failure or a runtime
   * control reply enters `retry`, with that outcome.
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
    let call: GrainCall;
    let address: string | undefined;
    try {
      call = this.prepare(kind, identity, message, options, parent, ack, replyTo);
      address = this.firstAddress(call);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (address === undefined) return this.retry<T>(call, undefined);
    const promise = call.promise<T>();
    call.address = address;
    // The call is its own request options (timeout, signal, header) and its reply's sink.
    this.deps.system.root.requestTo(this.aim(call, address), message, call, call);
    return promise;
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
    const start = Date.now();
    const deadline = Math.min(start + timeoutMs, parent?.deadline ?? Infinity);
    return new GrainCall(
      this.retryFrom,
      this.refs.get(kind, identity) ??
        this.refs.add(kind, identity, shardOf(identity, this.deps.shardCountOf(kind))),
      message,
      options,
      start,
      deadline,
      callHeader(parent?.chainId, parent?.path, ack, replyTo),
    );
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

  /** The grain's owner under the current topology (resolved once per topology and grain). */
  private ownerOf(ref: GrainRef): string | undefined {
    const topology = this.deps.topology();
    if (ref.topology !== topology) ref.resolve(topology, this.ownerAddress(ref.kind, ref.shard));
    return ref.address;
  }

  /**
   * The PID an attempt to `address` goes to, with the attempt's header set on the call: this
   * member's own router (identity in the header, a local post), or the grain's id there.
   */
  private aim(call: GrainCall, address: string): PID {
    const local = this.deps.localRouter(call.ref.kind);
    if (local !== undefined && local.address === address) {
      call.header = call.localHeader();
      return local;
    }
    call.header = call.extras;
    return call.ref.pidAt(address);
  }

  /**
   * The retry loop: handles `first` (the first attempt's outcome) if given, then tries again
   * with backoff until a reply, a final error or the deadline.
   */
  private async retry<T>(call: GrainCall, first: Outcome | undefined): Promise<T> {
    const { kind, identity, message, options, signal, start, deadline, ref } = call;
    let hint: string | undefined;
    let attempts = first === undefined ? 0 : 1;
    let last: unknown;
    let backoff = INITIAL_BACKOFF_MS;
    let followedHint = false;
    let outcome = first;
    for (;;) {
      if (outcome === undefined) {
        if (signal?.aborted) throw new AbortError(`${kind}/${identity}`, signal.reason);
        if (this.deps.stopped()) throw new ClusterStoppedError(`request to ${kind}/${identity}`);
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          throw new DeadlineExceededError(kind, identity, deadline - start, attempts, {
            cause: last,
          });
        }
        const address = hint ?? this.ownerOf(ref);
        hint = undefined;
        if (address !== undefined) {
          attempts++;
          outcome = { address, reply: undefined, failed: false, error: undefined };
          try {
            const target = this.aim(call, address);
            outcome.reply = await this.deps.system.root.request(target, message, {
              timeoutMs: remaining,
              signal,
              header: call.header,
            });
          } catch (err) {
            outcome.failed = true;
            outcome.error = err;
          }
        }
      }
      if (outcome !== undefined) {
        const { address, reply, failed, error } = outcome;
        outcome = undefined;
        if (failed) {
          if (error instanceof TimeoutError) {
            throw new DeadlineExceededError(kind, identity, deadline - start, attempts, {
              cause: error,
            });
          }
          if (!RETRYABLE_CODES.has((error as { code?: string }).code ?? '')) throw error;
          if (outcomeUnknown(error) && options?.idempotent !== true && !this.deps.stopped()) {
            throw new CallOutcomeUnknownError(kind, identity, address, { cause: error });
          }
          last = error;
        }
        const c = failed ? undefined : asControl(reply);
        if (!failed && reply !== undefined && c === undefined) return reply as T;
        if (c !== undefined) {
          switch (c.c) {
            case 'ack':
              return undefined as T;
            case 'not-owner':
              last = new NotOwnerError(kind, identity, c.owner);
              if (c.owner !== address) hint = c.owner;
              break;
            case 'failure':
              throw new GrainError(kind, identity, c.name, c.code, c.message);
            case 'denied':
              throw new ActivationDeniedError(kind, identity);
            case 'deadlock':
              throw new DeadlockError(c.chain);
            case 'mailbox-full':
              throw new MailboxFullError(`${kind}/${identity}`, c.capacity);
          }
        }
      }
      if (hint !== undefined && !followedHint) {
        followedHint = true; // a fresher owner was named: try it at once, but only once in a row
        continue;
      }
      followedHint = false;
      const topologyChanged = await this.sleep(
        Math.min(backoff * (0.5 + Math.random()), Math.max(1, deadline - Date.now())),
      );
      // A new topology may name a new owner that is claiming the shard now: short waits again.
      backoff = topologyChanged ? INITIAL_BACKOFF_MS : Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
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

  /**
   * The address of the desired owner. Undefined while no up member hosts the kind (a rolling
   * restart); UnknownKindError when no member of the topology hosts it at all.
   */
  private ownerAddress(kind: string, shard: number): string | undefined {
    const topology = this.deps.topology();
    const owner = ownerOf(kind, shard, topology);
    if (owner !== undefined) return owner.address;
    // An empty view (this member is re-registering) says nothing about the kind: retry.
    const members = topology.members;
    if (members.length > 0 && !members.some((m) => m.kinds.includes(kind))) {
      throw new UnknownKindError(
        kind,
        `unknown grain kind '${kind}': register it with kind() in Cluster.start({ kinds })`,
      );
    }
    return undefined;
  }

  /**
   * The member's topology changed (a dead member dropped, a member joined): grain references
   * let go of the old topology, and the calls sleeping between attempts wake at once and restart
   * their backoff, so a new owner is tried as soon as it is known instead of after the rest of a
   * backoff of up to 150 ms.
   */
  topologyChanged(): void {
    this.refs.topologyChanged();
    for (const wake of [...this.sleepers]) wake();
  }

  /** Resolves with false after `ms`, or with true as soon as the topology changes. */
  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve(true);
      };
      // A plain timer: the system's wheel stops at shutdown and would never wake this call.
      const timer = setTimeout(() => {
        this.sleepers.delete(wake);
        resolve(false);
      }, ms);
      this.sleepers.add(wake);
    });
  }
}
