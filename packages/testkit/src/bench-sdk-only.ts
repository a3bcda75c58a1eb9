import {
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type MeterProvider,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';

/**
 * The OpenTelemetry SDK calls Granary makes for one grain call, made by a benchmark around a
 * member that records nothing itself: so a benchmark tells the SDK's own cost from Granary's,
 * in the same process and run. Names, kinds and attribute sets are those of Granary's call
 * telemetry (`@granary/cluster` telemetry/call-telemetry.ts, grain-spans.ts, call-metrics.ts);
 * what Granary does around them (the `traceparent` header and its parse, contexts, buffering)
 * is left out: that is Granary's share.
 */
export interface SdkOnlyCalls {
  /** Caller side, before the call is sent: the span started, or the start time taken. */
  begin(kind: string, identity: string): unknown;
  /** Caller side, once the call answered: `handle` from {@link begin}. */
  end(handle: unknown): void;
  /** Owner side, one grain turn (a SERVER span under a remote parent, ended at once). */
  turn(kind: string, identity: string, activationId: string): void;
}

/** Scope name and version Granary's instruments use (telemetry.ts: INSTRUMENTATION_SCOPE). */
const SCOPE = '@granary/cluster';
const SCOPE_VERSION = '0.1.0';
/** The message type of the benchmarks' grain calls (`rpc.method` of a plain object). */
const METHOD = 'object';
/** Buckets of Granary's duration histograms (cluster-metrics.ts: DURATION_BUCKETS). */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Metrics: one `Histogram.record` per call with a cached 3-attribute set (kind, method, outcome). */
export function sdkOnlyMetrics(provider: MeterProvider): SdkOnlyCalls {
  const histogram: Histogram = provider
    .getMeter(SCOPE, SCOPE_VERSION)
    .createHistogram('granary.grain.call.duration', {
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  const attributes = new Map<string, Attributes>();
  return {
    begin: (kind) => {
      let a = attributes.get(kind);
      if (a === undefined) {
        a = { 'granary.grain.kind': kind, 'rpc.method': METHOD, 'granary.call.outcome': 'ok' };
        attributes.set(kind, a);
      }
      return { t0: performance.now(), a };
    },
    end: (handle) => {
      const h = handle as { t0: number; a: Attributes };
      histogram.record((performance.now() - h.t0) / 1000, h.a, ROOT_CONTEXT);
    },
    turn: () => undefined,
  };
}

/**
 * Tracing: a CLIENT span per call (6 attributes, `spanContext()` read as the header needs it,
 * the owner's address set and the span ended when it answered), and a SERVER span per turn
 * (9 attributes, under a remote parent context as a call's `traceparent` gives).
 */
export function sdkOnlyTraces(provider: TracerProvider, node: string): SdkOnlyCalls {
  const tracer = provider.getTracer(SCOPE, SCOPE_VERSION);
  // Made once per kind, as Granary's span names are.
  const names = new Map<string, string>();
  const nameOf = (kind: string): string => {
    let name = names.get(kind);
    if (name === undefined) names.set(kind, (name = `${kind}/${METHOD}`));
    return name;
  };
  const address: Attributes = { 'server.address': '127.0.0.1', 'server.port': 7000 };
  const parent: Context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: 1,
    isRemote: true,
  });
  return {
    begin: (kind, identity) => {
      const span = tracer.startSpan(
        nameOf(kind),
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'rpc.system.name': 'granary',
            'rpc.method': METHOD,
            'granary.grain.kind': kind,
            'granary.grain.key': identity,
            'granary.deadline.remaining_ms': 30_000,
            'granary.node.id': node,
          },
        },
        ROOT_CONTEXT,
      );
      span.spanContext();
      return span;
    },
    end: (handle) => {
      const span = handle as Span;
      span.setAttributes(address);
      span.end();
    },
    turn: (kind, identity, activationId) => {
      tracer
        .startSpan(
          nameOf(kind),
          {
            kind: SpanKind.SERVER,
            attributes: {
              'granary.grain.kind': kind,
              'granary.grain.key': identity,
              'granary.activation.id': activationId,
              'granary.shard': 1,
              'granary.shard.epoch': 1,
              'rpc.system.name': 'granary',
              'rpc.method': METHOD,
              'granary.deadline.remaining_ms': 30_000,
              'granary.node.id': node,
            },
          },
          parent,
        )
        .end();
    },
  };
}
