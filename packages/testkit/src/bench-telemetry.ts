import type { MeterProvider as ApiMeterProvider, TracerProvider } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { sdkOnlyMetrics, sdkOnlyTraces, type SdkOnlyCalls } from './bench-sdk-only';

/** The providers a member takes (`ClusterOptions.telemetry`). */
export interface BenchTelemetryOptions {
  tracerProvider?: TracerProvider;
  meterProvider?: ApiMeterProvider;
}

/**
 * What a benchmark member records: nothing (no SDK), metrics, or every span; or, for
 * `sdk-metrics` and `sdk-traces`, nothing itself while the benchmark makes the SDK calls
 * Granary would make (see {@link SdkOnlyCalls}): the SDK's own cost, measured in place.
 */
export type BenchTelemetry = 'none' | 'metrics' | 'traces' | 'sdk-metrics' | 'sdk-traces';

/**
 * The span processor's queue: spans wait here between exports. The SDK's default (2,048)
 * drops spans beyond it when more than 2,048 end between two exports, as 1,000 calls in flight
 * can do; a member traced at 100% would be given a larger one, and a benchmark that dropped
 * spans would measure less work than it claims.
 */
const SPAN_QUEUE = 65_536;

/**
 * An in-memory exporter that counts what it was given (dropped spans would show as missing)
 * and lets go of each batch once exported, as an exporter that sends spans away does: the
 * spans then die young (the batch processor hands them over every 512 spans, a few ms at this
 * rate). Kept for 250 ms instead (~25k spans), they were promoted and the benchmark measured
 * old-generation GC of its own store: tracing 0.19-0.29 of no SDK against 0.34 (docs/metrics.md).
 */
class CountingSpanExporter extends InMemorySpanExporter {
  exported = 0;
  override export(spans: ReadableSpan[], done: Parameters<InMemorySpanExporter['export']>[1]) {
    this.exported += spans.length;
    super.export(spans, done);
    this.reset();
  }
}

/** What {@link benchTelemetry} gives a benchmark member. */
export interface BenchTelemetrySetup {
  /** For Cluster.start({ telemetry }). */
  options: BenchTelemetryOptions;
  /** Spans exported so far. */
  spansExported(): number;
  /** The SDK calls to make around each call and turn (`sdk-*` modes only). */
  sdk: SdkOnlyCalls | undefined;
  shutdown(): Promise<void>;
}

/**
 * The providers of a benchmark member for `mode`, passed to Cluster.start({ telemetry }):
 * `none` registers nothing; `metrics` records into an SDK MeterProvider (collected once a
 * minute, as a Prometheus scrape would); `traces` samples every call and exports every span,
 * in batches as an application's SDK does (`BatchSpanProcessor`), to an in-memory exporter.
 * The `sdk-*` modes give the member nothing and return the same SDK's calls in `sdk`.
 * `node` is the member's id (`granary.node.id` of the SDK-only spans).
 */
export function benchTelemetry(mode: BenchTelemetry, node = ''): BenchTelemetrySetup {
  if (mode === 'none') {
    return {
      options: {},
      spansExported: () => 0,
      sdk: undefined,
      shutdown: async () => undefined,
    };
  }
  if (mode === 'metrics' || mode === 'sdk-metrics') {
    const reader = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 60_000,
    });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const sdk = mode === 'metrics' ? undefined : sdkOnlyMetrics(meterProvider);
    return {
      options: sdk === undefined ? { meterProvider } : {},
      spansExported: () => 0,
      sdk,
      shutdown: () => meterProvider.shutdown(),
    };
  }
  const spans = new CountingSpanExporter();
  const tracerProvider = new BasicTracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: SPAN_QUEUE })],
  });
  const sdk = mode === 'traces' ? undefined : sdkOnlyTraces(tracerProvider, node);
  return {
    options: sdk === undefined ? { tracerProvider } : {},
    spansExported: () => spans.exported,
    sdk,
    shutdown: () => tracerProvider.shutdown(),
  };
}
