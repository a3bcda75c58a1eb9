import { metrics } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { NodeConfig } from './config';

/** How often metrics are pushed to an OTLP collector (ms). */
const OTLP_METRICS_INTERVAL_MS = 10_000;

/** The node's OpenTelemetry SDK, if the configuration asks for any export. */
export interface NodeTelemetry {
  /** Serves `/metrics` on the ops server (GRANARY_OPS_PORT set). */
  readonly prometheus: PrometheusExporter | undefined;
  /** Flushes and stops the exporters. */
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry SDK the example's nodes export with, before the cluster starts
 * (the packages use only `@opentelemetry/api`): with `OTEL_EXPORTER_OTLP_ENDPOINT` set, every
 * span (grain calls, turns, activations, state, shard claims) and the metrics go to that
 * OTLP/HTTP collector; with `GRANARY_OPS_PORT` set, the metrics are also served as
 * `/metrics` on the ops server for Prometheus. Neither set: nothing is registered and the
 * cluster records nothing.
 */
export function startTelemetry(config: NodeConfig): NodeTelemetry {
  const resource = resourceFromAttributes({
    'service.name': `granary-ping-pong-${config.role}`,
    'service.instance.id': config.nodeId,
  });
  const readers: MetricReader[] = [];
  const prometheus =
    config.opsPort === undefined ? undefined : new PrometheusExporter({ preventServerStart: true });
  if (prometheus !== undefined) readers.push(prometheus);
  let tracer: NodeTracerProvider | undefined;
  if (config.otlpEndpoint !== undefined) {
    // The exporters read OTEL_EXPORTER_OTLP_ENDPOINT themselves (and add /v1/traces, /v1/metrics).
    tracer = new NodeTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    });
    tracer.register();
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(),
        exportIntervalMillis: OTLP_METRICS_INTERVAL_MS,
      }),
    );
  }
  const meter = readers.length > 0 ? new MeterProvider({ resource, readers }) : undefined;
  if (meter !== undefined) metrics.setGlobalMeterProvider(meter);
  return {
    prometheus,
    shutdown: async () => {
      await Promise.allSettled([tracer?.shutdown(), meter?.shutdown()]);
    },
  };
}
