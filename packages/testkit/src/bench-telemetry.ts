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

/** The providers a member takes (`ClusterOptions.telemetry`). */
export interface BenchTelemetryOptions {
  tracerProvider?: TracerProvider;
  meterProvider?: ApiMeterProvider;
}

/** What a benchmark member records: nothing (no SDK), metrics, or every span. */
export type BenchTelemetry = 'none' | 'metrics' | 'traces';

/**
 * How often the in-memory span exporter is emptied, so a long run does not grow the heap: an
 * exporter that sends spans away holds none after each export, while one that kept a second's
 * spans (~100k at this rate) made the benchmark measure old-generation GC of its own store.
 */
const RESET_SPANS_MS = 250;

/**
 * The span processor's queue: spans wait here between exports. The SDK's default (2,048)
 * drops spans beyond it when more than 2,048 end between two exports, as 1,000 calls in flight
 * can do; a member traced at 100% would be given a larger one, and a benchmark that dropped
 * spans would measure less work than it claims.
 */
const SPAN_QUEUE = 65_536;

/** An in-memory exporter that counts what it was given (dropped spans would show as missing). */
class CountingSpanExporter extends InMemorySpanExporter {
  exported = 0;
  override export(spans: ReadableSpan[], done: Parameters<InMemorySpanExporter['export']>[1]) {
    this.exported += spans.length;
    super.export(spans, done);
  }
}

/**
 * The providers of a benchmark member for `mode`, passed to Cluster.start({ telemetry }):
 * `none` registers nothing; `metrics` records into an SDK MeterProvider (collected once a
 * minute, as a Prometheus scrape would); `traces` samples every call and exports every span,
 * in batches as an application's SDK does (`BatchSpanProcessor`), to an in-memory exporter
 * (emptied every 250 ms). Returns the options, the number of spans exported so far, and a
 * shutdown.
 */
export function benchTelemetry(mode: BenchTelemetry): {
  options: BenchTelemetryOptions;
  spansExported(): number;
  shutdown(): Promise<void>;
} {
  if (mode === 'none') {
    return { options: {}, spansExported: () => 0, shutdown: async () => undefined };
  }
  if (mode === 'metrics') {
    const reader = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 60_000,
    });
    const meterProvider = new MeterProvider({ readers: [reader] });
    return {
      options: { meterProvider },
      spansExported: () => 0,
      shutdown: () => meterProvider.shutdown(),
    };
  }
  const spans = new CountingSpanExporter();
  const tracerProvider = new BasicTracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(spans, { maxQueueSize: SPAN_QUEUE })],
  });
  const timer = setInterval(() => spans.reset(), RESET_SPANS_MS);
  timer.unref();
  return {
    options: { tracerProvider },
    spansExported: () => spans.exported,
    shutdown: async () => {
      clearInterval(timer);
      await tracerProvider.shutdown();
    },
  };
}
