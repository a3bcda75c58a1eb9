import type { RequestOptions } from '@granary/core';
import { promiseSettledBy, type ReplySink, type Settlers } from '@granary/core/internal';
import type { GrainCallOptions } from '../grain';
import { localCallHeader } from './call-headers';
import { asControl } from './control-replies';
import type { GrainRef } from './grain-refs';

/** What one attempt of a call ended with. */
export interface Outcome {
  address: string;
  reply: unknown;
  failed: boolean;
  error: unknown;
}

/** Where a call goes when its first attempt did not end with the grain's reply. */
export type RetryFrom = (call: GrainCall, first: Outcome) => Promise<unknown>;

/**
 * One grain call: what its attempts share, the options of its core requests, and the sink of
 * its first attempt's reply. The first attempt settles the caller's promise directly when the
 * grain answered (one object and one promise per call: no derived promise, no closures); any
 * other outcome (a failure, a runtime control reply) goes on to the caller's retry loop.
 */
export class GrainCall implements ReplySink, RequestOptions, Settlers<unknown> {
  /** The first attempt's timeout (RequestOptions): the whole time left. */
  readonly timeoutMs: number;
  /** The member the first attempt went to. */
  address = '';
  /** The header of the attempt being sent (RequestOptions): `extras`, or `localHeader()`. */
  header: Record<string, string> | undefined = undefined;
  private local: Record<string, string> | undefined = undefined;
  /** The caller's promise's resolving functions (promiseSettledBy writes them). */
  resolve: ((value: unknown) => void) | undefined = undefined;
  reject: ((error: Error) => void) | undefined = undefined;

  constructor(
    private readonly retryFrom: RetryFrom,
    readonly ref: GrainRef,
    readonly message: unknown,
    readonly options: GrainCallOptions | undefined,
    /** Date.now() when the call began. */
    readonly start: number,
    readonly deadline: number,
    /** The chain and send headers, if any (an attempt to another member carries only these). */
    readonly extras: Record<string, string> | undefined,
  ) {
    this.timeoutMs = deadline - start;
  }

  /** The call's signal (RequestOptions). */
  get signal(): AbortSignal | undefined {
    return this.options?.signal;
  }

  get kind(): string {
    return this.ref.kind;
  }

  get identity(): string {
    return this.ref.identity;
  }

  /** The header of an attempt to this member's own router: the extras and the identity. */
  localHeader(): Record<string, string> {
    return (this.local ??= localCallHeader(this.ref.identity, this.extras));
  }

  /** The promise the caller returns; `settle` (or the retry loop) settles it. */
  promise<T>(): Promise<T> {
    return promiseSettledBy(this) as Promise<T>;
  }

  settle(reply: unknown, error: Error | undefined): void {
    if (error === undefined && reply !== undefined && asControl(reply) === undefined) {
      this.resolve!(reply);
      return;
    }
    // A failed attempt has no reply: only the error goes on (a reply that is an Error came as
    // the error too), so the retry loop never mistakes an error for the grain's answer.
    const failed = error !== undefined;
    const outcome = { address: this.address, reply: failed ? undefined : reply, failed, error };
    this.retryFrom(this, outcome).then(this.resolve, this.reject);
  }
}
