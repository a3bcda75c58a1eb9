import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What serves `/metrics`: a `PrometheusExporter` of `@opentelemetry/exporter-prometheus`,
 * created with `preventServerStart: true` and given to the application's MeterProvider as a
 * reader (the package itself carries no SDK).
 */
export interface PrometheusHandler {
  getMetricsRequestHandler(request: IncomingMessage, response: ServerResponse): void;
}

/**
 * The ops HTTP server (ClusterOptions.ops): health probes and metrics on their own port.
 *
 * @example
 * ops: { port: 9464, host: '0.0.0.0', prometheus: new PrometheusExporter({ preventServerStart: true }) }
 */
export interface OpsOptions {
  /** Port; 0 picks a free one (read it back as `cluster.ops.port`). */
  port: number;
  /**
   * Interface to bind. In Kubernetes the kubelet probes the pod's IP: bind `0.0.0.0` there.
   * @default '127.0.0.1'
   */
  host?: string | undefined;
  /**
   * Serves `/metrics` in Prometheus text format; without it `/metrics` answers 404.
   * @default undefined
   */
  prometheus?: PrometheusHandler | undefined;
  /**
   * `/livez` fails (503) when the event loop was held up longer than this within
   * `livenessWindowMs`: the process is hung or starved, and a restart may help.
   * @default 5000
   */
  maxEventLoopDelayMs?: number | undefined;
  /**
   * How long a long event-loop delay keeps `/livez` failing (ms).
   * @default 10000
   */
  livenessWindowMs?: number | undefined;
  /**
   * Most open connections; past it the one that has waited longest without a request in
   * progress (silent, trickling its head, idle between keep-alive requests) is closed to make
   * room, or the newcomer when every one is mid-request (logged, throttled). Without a bound
   * anyone who reaches the port holds a file descriptor per connection (3,000 idle sockets held
   * 3,000 of the member's), and at the process' limit the remote port and the provider's
   * connections fail too; closing the newcomer instead let silent sockets keep every probe out.
   * Probes, scrapes and dashboards need a handful.
   * @default 256
   */
  maxConnections?: number | undefined;
  /**
   * A connection that has not sent a whole request head within this is closed (408): a peer
   * trickling header lines (slowloris) holds its connection this long at most.
   * @default 10000
   */
  headersTimeoutMs?: number | undefined;
  /**
   * A connection that has not sent a whole request (head and body) within this is closed (408):
   * a body trickled a byte at a time is cut off. Answers that stream (the admin API's live
   * events) are not bounded by it.
   * @default 30000
   */
  requestTimeoutMs?: number | undefined;
}

/** Defaults of OpsOptions. */
export const DEFAULT_OPS_OPTIONS = {
  host: '127.0.0.1',
  maxEventLoopDelayMs: 5000,
  livenessWindowMs: 10_000,
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
} as const;

/** The probe paths (the Kubernetes manifest's probes name them; a test checks both agree). */
export const OPS_PATHS = {
  livez: '/livez',
  readyz: '/readyz',
  startupz: '/startupz',
  metrics: '/metrics',
} as const;

/** A route handler of the ops server (the admin API mounts its routes this way). */
export type OpsHandler = (
  request: IncomingMessage,
  response: ServerResponse,
) => void | Promise<void>;
