import {
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { traceContextOf } from '@granary/core';
import {
  ATTR_ACTIVATION_ID,
  ATTR_DEADLINE_REMAINING_MS,
  ATTR_GRAIN_KEY,
  ATTR_GRAIN_KIND,
  ATTR_NODE_ID,
  ATTR_REASON,
  ATTR_RPC_METHOD,
  ATTR_RPC_SYSTEM_NAME,
  ATTR_SHARD,
  ATTR_SHARD_EPOCH,
  RPC_SYSTEM,
} from './attributes';
import { methodOf, spanNameOf } from './method-of';
import type { ClusterTelemetry } from './telemetry';

/** Span names of the grain lifecycle (low cardinality: the kind is an attribute). */
export const SPAN_ACTIVATE = 'granary.activate';
export const SPAN_DEACTIVATE = 'granary.deactivate';

/** The activation a grain span describes. */
export interface SpannedGrain {
  readonly kind: string;
  readonly identity: string;
  /** The activation id. */
  readonly id: string;
  readonly shard: number;
  /** The epoch of the shard claim it runs under (0 when not held). */
  readonly epoch: number;
}

/** A started span and the context whose active span it is (for the work done inside it). */
export interface SpanScope {
  readonly span: Span;
  readonly context: Context;
}

function grainAttributes(g: SpannedGrain): Record<string, string | number> {
  return {
    [ATTR_GRAIN_KIND]: g.kind,
    [ATTR_GRAIN_KEY]: g.identity,
    [ATTR_ACTIVATION_ID]: g.id,
    [ATTR_SHARD]: g.shard,
    [ATTR_SHARD_EPOCH]: g.epoch,
  };
}

/**
 * The SERVER span of one grain turn, child of the caller's span when the call's headers carry
 * it (`traceparent`); the calls the turn makes are its children.
 */
export function startTurnSpan(
  telemetry: ClusterTelemetry,
  grain: SpannedGrain,
  message: unknown,
  header: Readonly<Record<string, string>> | undefined,
  deadline: number | undefined,
  now: number,
): SpanScope {
  const method = methodOf(message);
  const parent = traceContextOf(header);
  // One object with every attribute (one shape, no property added after it is made).
  const attributes: Attributes = {
    [ATTR_GRAIN_KIND]: grain.kind,
    [ATTR_GRAIN_KEY]: grain.identity,
    [ATTR_ACTIVATION_ID]: grain.id,
    [ATTR_SHARD]: grain.shard,
    [ATTR_SHARD_EPOCH]: grain.epoch,
    [ATTR_RPC_SYSTEM_NAME]: RPC_SYSTEM,
    [ATTR_RPC_METHOD]: method,
    [ATTR_DEADLINE_REMAINING_MS]: deadline === undefined ? undefined : deadline - now,
    [ATTR_NODE_ID]: telemetry.node,
  };
  const span = telemetry.startSpan(
    spanNameOf(grain.kind, method),
    SpanKind.SERVER,
    attributes,
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** The span of an activation (onActivate, state load), child of the call that started it. */
export function startActivationSpan(
  telemetry: ClusterTelemetry,
  grain: SpannedGrain,
  parent: Context | undefined,
): SpanScope {
  const base = parent ?? ROOT_CONTEXT;
  const span = telemetry.startSpan(SPAN_ACTIVATE, SpanKind.INTERNAL, grainAttributes(grain), base);
  return { span, context: trace.setSpan(base, span) };
}

/** The span of a deactivation (onDeactivate, a final state save): a root span with its reason. */
export function startDeactivationSpan(
  telemetry: ClusterTelemetry,
  grain: SpannedGrain,
  reason: string,
): SpanScope {
  const attributes = grainAttributes(grain);
  attributes[ATTR_REASON] = reason;
  const span = telemetry.startSpan(SPAN_DEACTIVATE, SpanKind.INTERNAL, attributes, ROOT_CONTEXT);
  return { span, context: trace.setSpan(ROOT_CONTEXT, span) };
}

/** `trace_id` and `span_id` of a span, for a log line written outside its context. */
export function traceFields(span: Span | undefined): Record<string, string> {
  if (span === undefined) return {};
  const sc = span.spanContext();
  return { trace_id: sc.traceId, span_id: sc.spanId };
}
