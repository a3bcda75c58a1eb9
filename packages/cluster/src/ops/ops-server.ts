import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { InvalidOptionError, LogThrottle, type Logger } from '@granary/core';
import { listenError } from '@granary/core/internal';
import type { HealthReport, HealthSource } from './health';
import { ConnectionSlots } from './connection-slots';
import { LoopMonitor } from './loop-monitor';
import { DEFAULT_OPS_OPTIONS, OPS_PATHS, type OpsHandler, type OpsOptions } from './ops-options';

const STARTING: HealthReport = { ok: false, checks: { member: 'starting' } };
/** How often Node looks for connections past their header or request timeout (ms). */
const TIMEOUT_CHECK_MS = 1000;
/** The answer to CONNECT (no route of the ops server tunnels). */
const CONNECT_REFUSED =
  'HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json; charset=utf-8\r\n' +
  'Content-Length: 30\r\nConnection: close\r\n\r\n{"error":"method not allowed"}';
/** Refused connections are logged at most once per this (a flood is one line and a count). */
const DROP_LOG_INTERVAL_MS = 10_000;

/** The 404 body of `/metrics` on a member started without `ops.prometheus`. */
const NO_METRICS_EXPORTER =
  'no metrics exporter: start the member with ops.prometheus, a PrometheusExporter of ' +
  '@opentelemetry/exporter-prometheus ({ preventServerStart: true }) that is also a reader of ' +
  'the MeterProvider in telemetry.meterProvider (docs/metrics.md)';

/**
 * A member's ops HTTP server, on its own port (loopback by default): `/livez` (the event loop
 * runs: nothing outside the process is asked), `/readyz` (joined, lease valid, not leaving, not
 * shedding load; 503 from the moment a graceful leave starts), `/startupz` (joined once), and
 * `/metrics` in Prometheus text format when a Prometheus exporter is given. Probes answer JSON:
 * `{ status, checks }`. Other routes can be mounted with `route` (the admin API).
 *
 * It starts before the member joins, so `/startupz` and `/readyz` answer 503 while it joins.
 */
export class OpsServer {
  private readonly routes = new Map<string, OpsHandler>();
  private readonly loop: LoopMonitor;
  private readonly maxDelayMs: number;
  private health: HealthSource | undefined = undefined;

  private constructor(
    private readonly server: Server,
    options: OpsOptions,
    private readonly logger: Logger,
  ) {
    const windowMs = options.livenessWindowMs ?? DEFAULT_OPS_OPTIONS.livenessWindowMs;
    this.maxDelayMs = options.maxEventLoopDelayMs ?? DEFAULT_OPS_OPTIONS.maxEventLoopDelayMs;
    this.loop = new LoopMonitor(windowMs);
    this.route('GET', OPS_PATHS.livez, (_req, res) => this.livez(res));
    this.route('GET', OPS_PATHS.readyz, (_req, res) =>
      this.probe(res, this.health?.readiness() ?? STARTING),
    );
    this.route('GET', OPS_PATHS.startupz, (_req, res) =>
      this.probe(res, this.health?.startup() ?? STARTING),
    );
    const prometheus = options.prometheus;
    // Without an exporter the path still answers 404, but says what serves it: a bare 'not
    // found' sent users looking for a wrong port or path.
    this.route('GET', OPS_PATHS.metrics, (req, res) =>
      prometheus === undefined
        ? send(res, 404, { error: NO_METRICS_EXPORTER })
        : prometheus.getMetricsRequestHandler(req, res),
    );
  }

  /** Validates the options and listens; rejects if the port cannot be bound. */
  static async start(options: OpsOptions, logger: Logger): Promise<OpsServer> {
    if (!(Number.isInteger(options.port) && options.port >= 0 && options.port <= 65535)) {
      throw new InvalidOptionError(
        'ops.port',
        `must be an integer in [0, 65535], got ${options.port}`,
      );
    }
    const max = options.maxEventLoopDelayMs;
    if (max !== undefined && !(max > 0)) {
      throw new InvalidOptionError('ops.maxEventLoopDelayMs', `must be > 0, got ${max}`);
    }
    const bounds = connectionBounds(options);
    const server = createServer({
      headersTimeout: bounds.headersTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs,
      // Node looks for connections past those timeouts every 30 s unless told otherwise.
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, bounds.headersTimeoutMs),
    });
    const drops = new LogThrottle(logger, DROP_LOG_INTERVAL_MS);
    new ConnectionSlots(server, bounds.maxConnections, (how) =>
      drops.log(
        how,
        'warn',
        { limit: 'ops.maxConnections' },
        how === 'evicted'
          ? `ops connection closed to make room: ${bounds.maxConnections} are open and it had no request in progress (ops.maxConnections)`
          : `ops connection refused: ${bounds.maxConnections} are open, each with a request in progress (ops.maxConnections)`,
      ),
    );
    const ops = new OpsServer(server, options, logger);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => ops.handle(req, res));
    // Without a listener Node closes a CONNECT's socket without a word; say why instead.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => socket.end(CONNECT_REFUSED));
    const host = options.host ?? DEFAULT_OPS_OPTIONS.host;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      ops.loop.close();
      throw listenError('ops.', host, options.port, err);
    }
    logger.info({ host, port: ops.port }, 'ops server listening');
    return ops;
  }

  /** The bound port. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://host:port` of the server. */
  get url(): string {
    const a = this.server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  /** The member answers `/startupz` and `/readyz` from now on. */
  setHealth(health: HealthSource): void {
    this.health = health;
  }

  /**
   * Mounts a handler on `method path` (exact path; the query string is ignored). A later
   * route for the same method and path replaces the earlier one.
   */
  route(method: string, path: string, handler: OpsHandler): void {
    this.routes.set(`${method.toUpperCase()} ${path}`, handler);
  }

  /** Stops listening and closes open connections. */
  async close(): Promise<void> {
    this.loop.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    // HEAD is GET without the body (Node leaves it out): uptime checks and `curl -I` use it.
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    const handler = this.routes.get(`${method} ${path}`);
    if (handler === undefined) {
      const allowed = [...this.routes.keys()]
        .filter((k) => k.endsWith(` ${path}`))
        .map((k) => k.slice(0, k.indexOf(' ')));
      if (allowed.length === 0) return send(res, 404, { error: 'not found' });
      if (allowed.includes('GET')) allowed.push('HEAD');
      // A 405 names what the path takes (RFC 9110 asks for Allow).
      return send(res, 405, { error: 'method not allowed' }, { allow: allowed.join(', ') });
    }
    try {
      const done = handler(req, res);
      if (done instanceof Promise) done.catch((err: unknown) => this.failed(res, path, err));
    } catch (err) {
      this.failed(res, path, err);
    }
  }

  private failed(res: ServerResponse, path: string, err: unknown): void {
    this.logger.error({ err, path }, 'ops route failed');
    if (!res.headersSent) send(res, 500, { error: 'internal error' });
    else res.end();
  }

  private livez(res: ServerResponse): void {
    const delay = Math.round(this.loop.delayMs());
    const ok = delay <= this.maxDelayMs;
    const why = `event loop delayed ${delay} ms (maxEventLoopDelayMs ${this.maxDelayMs})`;
    send(res, ok ? 200 : 503, {
      status: ok ? 'ok' : 'failing',
      checks: { eventLoop: ok ? 'ok' : why },
      eventLoopDelayMs: delay,
    });
  }

  private probe(res: ServerResponse, report: HealthReport): void {
    send(res, report.ok ? 200 : 503, {
      status: report.ok ? 'ok' : 'failing',
      checks: report.checks,
    });
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** The connection bounds of `options`, checked (Node wants the head's timeout within the request's). */
function connectionBounds(options: OpsOptions): {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
} {
  const d = DEFAULT_OPS_OPTIONS;
  const b = {
    maxConnections: options.maxConnections ?? d.maxConnections,
    headersTimeoutMs: options.headersTimeoutMs ?? d.headersTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs ?? d.requestTimeoutMs,
  };
  for (const [name, v] of Object.entries(b)) {
    if (!(Number.isSafeInteger(v) && v >= 1)) {
      throw new InvalidOptionError(`ops.${name}`, `must be an integer >= 1, got ${v}`);
    }
  }
  if (b.headersTimeoutMs > b.requestTimeoutMs) {
    throw new InvalidOptionError(
      'ops.headersTimeoutMs',
      `must be <= ops.requestTimeoutMs (${b.requestTimeoutMs}), got ${b.headersTimeoutMs}`,
    );
  }
  return b;
}
