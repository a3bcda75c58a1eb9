import type { RequestOptions } from '@granary/core';
import { promiseSettledBy, type ReplySink, type Settlers } from '@granary/core/internal';
import type { CallObservation, ObservedCall } from '../../telemetry/call-telemetry';
import type { GrainCallOptions } from '../grain';
import { setbackOf, type CallFacts, type Setback } from './call-outcome';
import type { GrainRef } from './grain-refs';

/** The caller's side of a call: its retry loop, and whether the member is stopping. */
export interface CallRetrier {
  /** Goes on with a call whose first attempt ended with `first`; settles with its outcome. */
  retry(call: GrainCall, first: Setback): Promise<unknown>;
  /** An observed call's first attempt got the grain's answer (telemetry). */
  answered(call: GrainCall): void;
  /** True once the member's actor system shuts down. */
  stopping(): boolean;
  /** A call answered by its first attempt (the retry loop accounts for the others). */
  ended(call: GrainCall): void;
}

/**
 * One grain call: what its attempts share, the options of its core requests, and the sink of
 * its first attempt's reply. The first attempt settles the caller's promise directly when the
 * grain answered (one object and one promise per call: no derived promise, no closures); any
 * other outcome goes on to the caller's retry loop with its classification.
 */
export class GrainCall
  implements ReplySink, RequestOptions, CallFacts, Settlers<unknown>, ObservedCall
{
  /** The first attempt's timeout (RequestOptions): the whole time left. */
  readonly timeoutMs: number;
  /** The member the first attempt went to. */
  address = '';
  /** The caller's promise's resolving functions (promiseSettledBy writes them). */
  resolve: ((value: unknown) => void) | undefined = undefined;
  reject: ((error: Error) => void) | undefined = undefined;
  /** Its span and metrics state, when calls are observed (an SDK is registered). */
  observation: CallObservation | undefined = undefined;

  constructor(
    private readonly caller: CallRetrier,
    readonly ref: GrainRef,
    readonly message: unknown,
    readonly options: GrainCallOptions | undefined,
    /** When the call began, on the member's monotonic clock (`clock.monotonic()`). */
    readonly start: number,
    /** The call's deadline on the same clock. */
    readonly deadline: number,
    /**
     * The chain and send headers of every attempt (RequestOptions), if any; the trace context
     * is added when the call is traced.
     */
    public header: Record<string, string> | undefined,
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

  /** The promise the caller returns; `settle` (or the retry loop) settles it. */
  promise<T>(): Promise<T> {
    return promiseSettledBy(this) as Promise<T>;
  }

  /** The first attempt's outcome (ReplySink). */
  settle(reply: unknown, error: Error | undefined): void {
    const stopping = error !== undefined && this.caller.stopping();
    const setback = setbackOf(this, error, this.address, stopping);
    if (setback === undefined) {
      this.caller.ended(this);
      if (this.observation !== undefined) this.caller.answered(this);
      this.resolve!(reply);
    } else this.caller.retry(this, setback).then(this.resolve, this.reject);
  }
}
