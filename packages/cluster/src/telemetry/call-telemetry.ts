import { SpanKind, context, type Context, type Span } from '@opentelemetry/api';
import { injectSpanContext } from '@granary/core';
import {
  ATTR_ATTEMPT,
  ATTR_DEADLINE_REMAINING_MS,
  ATTR_GRAIN_KEY,
  ATTR_GRAIN_KIND,
  ATTR_NODE_ID,
  ATTR_REASON,
  ATTR_RPC_METHOD,
  ATTR_RPC_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  RPC_SYSTEM,
  type CallOutcome,
} from './attributes';
import type { CallMetrics } from './call-metrics';
import { methodOf, spanNameOf } from './method-of';
import { endSpan, errorTypeOf, type ClusterTelemetry } from './telemetry';

/** What the call telemetry reads of a grain call. */
export interface ObservedCall {
  readonly kind: string;
  readonly identity: string;
  readonly message: unknown;
  readonly deadline: number;
  readonly start: number;
  /** The member the latest attempt went to. */
  readonly address: string;
  /** The call's headers (chain, send): the trace context is added to a copy. */
  header: Record<string, string> | undefined;
  /** Set by begin(): the call is observed. */
  observation: CallObservation | undefined;
}

/** The telemetry state of one observed call. */
export class CallObservation {
  constructor(
    readonly method: string,
    /** Monotonic ms at the start (metrics only). */
    readonly t0: number,
    readonly span: Span | undefined,
  ) {}
}

/**
 * The client side of grain calls: a CLIENT span per call (retries as its events, `error.type`
 * on failure, the owner's address), its trace context in the call's headers, and the call
 * metrics (duration by kind, method and outcome; calls by outcome). Asked once per call whether
 * anything is on (`on`); with no SDK the call path does nothing else.
 */
export class CallTelemetry {
  constructor(
    private readonly telemetry: ClusterTelemetry,
    private readonly metrics: CallMetrics | undefined,
    private readonly monotonic: () => number,
  ) {}

  /** True when calls are observed: metrics recording or tracing on. */
  get on(): boolean {
    return this.metrics !== undefined || this.telemetry.tracing;
  }

  /**
   * A call begins: its span starts under `parent` (the calling grain's turn) or the active
   * context, and its headers carry the span's context to the owner.
   */
  begin(call: ObservedCall, parent: Context | undefined): void {
    const method = methodOf(call.message);
    let span: Span | undefined;
    if (this.telemetry.tracing) {
      const base = parent ?? context.active();
      span = this.telemetry.startSpan(
        spanNameOf(call.kind, method),
        SpanKind.CLIENT,
        {
          [ATTR_RPC_SYSTEM_NAME]: RPC_SYSTEM,
          [ATTR_RPC_METHOD]: method,
          [ATTR_GRAIN_KIND]: call.kind,
          [ATTR_GRAIN_KEY]: call.identity,
          [ATTR_DEADLINE_REMAINING_MS]: call.deadline - call.start,
          [ATTR_NODE_ID]: this.telemetry.node,
        },
        base,
      );
      const header: Record<string, string> = { ...call.header };
      if (injectSpanContext(span.spanContext(), base, header)) call.header = header;
    }
    call.observation = new CallObservation(
      method,
      this.metrics === undefined ? 0 : this.monotonic(),
      span,
    );
  }

  /** An attempt failed and the call tries again: counted, and an event on the span. */
  retried(call: ObservedCall, error: Error, attempt: number): void {
    const o = call.observation;
    if (o === undefined) return;
    this.metrics?.count(call.kind, 'retried');
    o.span?.addEvent('retry', {
      [ATTR_REASON]: errorTypeOf(error),
      [ATTR_ATTEMPT]: attempt,
      ...addressAttributes(call.address),
    });
  }

  /** The call ended: with the grain's answer (`error` undefined) or with `error`. */
  ended(call: ObservedCall, error: Error | undefined, outcome: CallOutcome): void {
    const o = call.observation;
    if (o === undefined) return;
    const m = this.metrics;
    if (m !== undefined) {
      m.count(call.kind, outcome);
      m.duration(call.kind, o.method, outcome, (this.monotonic() - o.t0) / 1000);
    }
    const span = o.span;
    if (span !== undefined) {
      if (call.address !== '') span.setAttributes(addressAttributes(call.address));
      endSpan(span, error);
    }
  }
}

/** Addresses parsed so far (members come and go: emptied when it grows past the bound). */
const addresses = new Map<string, Readonly<Record<string, string | number>>>();
const MAX_ADDRESSES = 1024;

/** `server.address` and `server.port` of a member address `host:port` (parsed once). */
function addressAttributes(address: string): Readonly<Record<string, string | number>> {
  let a = addresses.get(address);
  if (a === undefined) {
    if (addresses.size >= MAX_ADDRESSES) addresses.clear();
    addresses.set(address, (a = parseAddress(address)));
  }
  return a;
}

function parseAddress(address: string): Record<string, string | number> {
  const colon = address.lastIndexOf(':');
  if (colon < 0) return { [ATTR_SERVER_ADDRESS]: address };
  const port = Number(address.slice(colon + 1));
  return Number.isInteger(port)
    ? { [ATTR_SERVER_ADDRESS]: address.slice(0, colon), [ATTR_SERVER_PORT]: port }
    : { [ATTR_SERVER_ADDRESS]: address };
}
