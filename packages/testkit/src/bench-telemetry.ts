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
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** The providers a member takes (`ClusterOptions.telemetry`). */
export interface BenchTelemetryOptions {
  tracerProvider?: TracerProvider;
  meterProvider?: ApiMeterProvider;
}

/** What a benchmark member records: nothing (no SDK), metrics, or every span. */
export type BenchTelemetry = 'none' | 'metrics' | 'traces';

/** How often the in-memory span exporter is emptied, so a long run does not grow the heap. */
const RESET_SPANS_MS = 1000;

/**
 * The providers of a benchmark member for `mode`, passed to Cluster.start({ telemetry }):
 * `none` registers nothing; `metrics` records into an SDK MeterProvider (collected once a
 * minute, as a Prometheus scrape would); `traces` samples every call and exports every span to
 * an in-memory exporter (emptied each second). Returns the options and a shutdown.
 */
export function benchTelemetry(mode: BenchTelemetry): {
  options: BenchTelemetryOptions;
  shutdown(): Promise<void>;
} {
  if (mode === 'none') return { options: {}, shutdown: async () => undefined };
  if (mode === 'metrics') {
    const reader = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 60_000,
    });
    const meterProvider = new MeterProvider({ readers: [reader] });
    return { options: { meterProvider }, shutdown: () => meterProvider.shutdown() };
  }
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  const timer = setInterval(() => spans.reset(), RESET_SPANS_MS);
  timer.unref();
  return {
    options: { tracerProvider },
    shutdown: async () => {
      clearInterval(timer);
      await tracerProvider.shutdown();
    },
  };
}
