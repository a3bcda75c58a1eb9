import { ConfigError } from './errors';

/** What a node process runs: the seed of the seed provider, a ponger host, or the pinger. */
export type NodeRole = 'seed' | 'ponger' | 'pinger';

/** Which membership provider the nodes use. */
export type ProviderName = 'seed' | 'etcd';

/**
 * Everything a node reads from its environment. This file is the only place the example reads
 * `process.env` (the docker-compose test checks every variable the compose file sets is listed
 * in ENV_VARS).
 */
export interface NodeConfig {
  /** Role of this process. */
  role: NodeRole;
  /**
   * Cluster name (`GRANARY_CLUSTER`): members of different clusters never see each other.
   * @default 'ping-pong'
   */
  cluster: string;
  /**
   * Member id, also the node name printed with every pong (`GRANARY_NODE_ID`).
   * @default `<role>-<pid>`
   */
  nodeId: string;
  /**
   * Interface the remote transport listens on (`GRANARY_HOST`).
   * @default '127.0.0.1'
   */
  host: string;
  /**
   * Port the remote transport listens on (`GRANARY_PORT`); 0 picks a free one.
   * @default 0
   */
  port: number;
  /**
   * Host name other members dial (`GRANARY_ADVERTISED_HOST`), e.g. the compose service name.
   * @default host
   */
  advertisedHost: string;
  /**
   * Shared secret of the cluster (`GRANARY_SECRET`, at least 16 bytes): members prove they
   * know it in every handshake (it never crosses the wire). Needed to listen beyond loopback
   * unless mutual TLS is set.
   * @default undefined
   */
  secret: string | undefined;
  /**
   * Mutual TLS (`GRANARY_TLS_CA`, `GRANARY_TLS_CERT`, `GRANARY_TLS_KEY`: PEM file paths, all
   * three or none): every member presents a certificate of the CA covering its advertised host.
   * @default undefined
   */
  tls: { ca: string; cert: string; key: string } | undefined;
  /**
   * Listen beyond loopback without a secret or TLS (`GRANARY_INSECURE=1`): any process that
   * reaches the port may join. Only for a network nothing else can reach.
   * @default false
   */
  insecure: boolean;
  /**
   * Membership provider (`GRANARY_PROVIDER`): `seed` (no dependencies) or `etcd`.
   * @default 'seed'
   */
  provider: ProviderName;
  /**
   * `host:port` of the seed node (`GRANARY_SEED`); required by non-seed roles with provider seed.
   * @default undefined
   */
  seed: string | undefined;
  /**
   * etcd endpoints, comma-separated (`GRANARY_ETCD`); required with provider etcd.
   * @default []
   */
  etcd: string[];
  /**
   * Redis URL (`GRANARY_REDIS`): when set, each ponger grain keeps how many pings it answered
   * in Redis, so the count survives a failover, and ponger nodes keep durable reminders there
   * (the digest grain's, src/digest.ts).
   * @default undefined (in memory, lost when the grain moves)
   */
  redis: string | undefined;
  /**
   * Ponger nodes: serve `messages.Ponger` to any gRPC client on this port
   * (`GRANARY_GATEWAY_PORT`, on GRANARY_HOST); undefined: no gateway.
   */
  gatewayPort: number | undefined;
  /**
   * Ponger grain idle time before passivation, ms (`GRANARY_IDLE_TIMEOUT_MS`).
   * @default 10000
   */
  idleTimeoutMs: number;
  /**
   * Pinger: time between pings, ms (`GRANARY_PING_INTERVAL_MS`).
   * @default 1000
   */
  pingIntervalMs: number;
  /**
   * Pinger: deadline of one ping including its retries, ms (`GRANARY_PING_DEADLINE_MS`).
   * @default 5000
   */
  pingDeadlineMs: number;
  /**
   * Pinger: identity of the grain it pings (`GRANARY_PONGER_ID`).
   * @default 'ponger-1'
   */
  pongerId: string;
  /**
   * Exit when stdin closes (`GRANARY_PARENT_PIPE=1`): set by the demo runner so no node
   * outlives it, even if the runner is SIGKILLed.
   * @default false
   */
  exitWithParent: boolean;
  /**
   * Port of the ops HTTP server (`GRANARY_OPS_PORT`): `/livez`, `/readyz`, `/startupz`, and
   * `/metrics` in Prometheus format. Unset: no ops server.
   * @default undefined
   */
  opsPort: number | undefined;
  /**
   * Interface the ops server binds (`GRANARY_OPS_HOST`); `0.0.0.0` in a container, so the
   * kubelet and Prometheus reach it.
   * @default '127.0.0.1'
   */
  opsHost: string;
  /**
   * OTLP/HTTP collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, e.g. `http://otel-collector:4318`):
   * traces and metrics are exported there when set.
   * @default undefined
   */
  otlpEndpoint: string | undefined;
}

/** Every environment variable the example reads. */
export const ENV_VARS = [
  'GRANARY_CLUSTER',
  'GRANARY_NODE_ID',
  'GRANARY_HOST',
  'GRANARY_PORT',
  'GRANARY_ADVERTISED_HOST',
  'GRANARY_SECRET',
  'GRANARY_TLS_CA',
  'GRANARY_TLS_CERT',
  'GRANARY_TLS_KEY',
  'GRANARY_INSECURE',
  'GRANARY_PROVIDER',
  'GRANARY_SEED',
  'GRANARY_ETCD',
  'GRANARY_REDIS',
  'GRANARY_GATEWAY_PORT',
  'GRANARY_IDLE_TIMEOUT_MS',
  'GRANARY_PING_INTERVAL_MS',
  'GRANARY_PING_DEADLINE_MS',
  'GRANARY_PONGER_ID',
  'GRANARY_PARENT_PIPE',
  'GRANARY_OPS_PORT',
  'GRANARY_OPS_HOST',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
] as const;

/** Names of the environment variables, as read by `readConfig`. */
export type EnvVar = (typeof ENV_VARS)[number];

/** Defaults of the optional fields of NodeConfig. */
export const DEFAULT_NODE_CONFIG = {
  cluster: 'ping-pong',
  host: '127.0.0.1',
  port: 0,
  provider: 'seed' as ProviderName,
  idleTimeoutMs: 10_000,
  pingIntervalMs: 1_000,
  pingDeadlineMs: 5_000,
  pongerId: 'ponger-1',
  opsHost: '127.0.0.1',
} as const;

/** Reads and validates the configuration of a `role` node from `env`; throws ConfigError. */
export function readConfig(
  role: NodeRole,
  env: Partial<Record<EnvVar, string>> = process.env,
): NodeConfig {
  const text = (name: EnvVar): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const int = (name: EnvVar, fallback: number, min: number): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) {
      throw new ConfigError(name, `${name} must be an integer >= ${min}, got '${raw}'`);
    }
    return n;
  };
  const provider = text('GRANARY_PROVIDER') ?? DEFAULT_NODE_CONFIG.provider;
  if (provider !== 'seed' && provider !== 'etcd') {
    throw new ConfigError(
      'GRANARY_PROVIDER',
      `GRANARY_PROVIDER must be seed or etcd, got '${provider}'`,
    );
  }
  const host = text('GRANARY_HOST') ?? DEFAULT_NODE_CONFIG.host;
  const tlsFiles = [text('GRANARY_TLS_CA'), text('GRANARY_TLS_CERT'), text('GRANARY_TLS_KEY')];
  const tlsSet = tlsFiles.filter((f) => f !== undefined).length;
  if (tlsSet !== 0 && tlsSet !== 3) {
    throw new ConfigError(
      'GRANARY_TLS_CA',
      'GRANARY_TLS_CA, GRANARY_TLS_CERT and GRANARY_TLS_KEY go together: set all three or none',
    );
  }
  const secret = text('GRANARY_SECRET');
  if (secret !== undefined && Buffer.byteLength(secret) < 16) {
    throw new ConfigError('GRANARY_SECRET', 'GRANARY_SECRET must be at least 16 bytes');
  }
  const config: NodeConfig = {
    role,
    cluster: text('GRANARY_CLUSTER') ?? DEFAULT_NODE_CONFIG.cluster,
    nodeId: text('GRANARY_NODE_ID') ?? `${role}-${process.pid}`,
    host,
    port: int('GRANARY_PORT', DEFAULT_NODE_CONFIG.port, 0),
    advertisedHost: text('GRANARY_ADVERTISED_HOST') ?? host,
    secret,
    tls: tlsSet === 3 ? { ca: tlsFiles[0]!, cert: tlsFiles[1]!, key: tlsFiles[2]! } : undefined,
    insecure: text('GRANARY_INSECURE') === '1',
    provider,
    seed: text('GRANARY_SEED'),
    etcd: (text('GRANARY_ETCD') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    redis: text('GRANARY_REDIS'),
    gatewayPort:
      text('GRANARY_GATEWAY_PORT') === undefined ? undefined : int('GRANARY_GATEWAY_PORT', 0, 0),
    idleTimeoutMs: int('GRANARY_IDLE_TIMEOUT_MS', DEFAULT_NODE_CONFIG.idleTimeoutMs, 1),
    pingIntervalMs: int('GRANARY_PING_INTERVAL_MS', DEFAULT_NODE_CONFIG.pingIntervalMs, 1),
    pingDeadlineMs: int('GRANARY_PING_DEADLINE_MS', DEFAULT_NODE_CONFIG.pingDeadlineMs, 1),
    pongerId: text('GRANARY_PONGER_ID') ?? DEFAULT_NODE_CONFIG.pongerId,
    exitWithParent: text('GRANARY_PARENT_PIPE') === '1',
    opsPort: text('GRANARY_OPS_PORT') === undefined ? undefined : int('GRANARY_OPS_PORT', 0, 0),
    opsHost: text('GRANARY_OPS_HOST') ?? DEFAULT_NODE_CONFIG.opsHost,
    otlpEndpoint: text('OTEL_EXPORTER_OTLP_ENDPOINT'),
  };
  if (config.opsPort !== undefined && config.opsPort > 65535) {
    throw new ConfigError(
      'GRANARY_OPS_PORT',
      `GRANARY_OPS_PORT must be <= 65535, got ${config.opsPort}`,
    );
  }
  if (provider === 'etcd' && config.etcd.length === 0) {
    throw new ConfigError('GRANARY_ETCD', 'GRANARY_ETCD is required when GRANARY_PROVIDER=etcd');
  }
  if (provider === 'seed' && role !== 'seed' && config.seed === undefined) {
    throw new ConfigError(
      'GRANARY_SEED',
      'GRANARY_SEED (host:port of the seed node) is required when GRANARY_PROVIDER=seed',
    );
  }
  if (provider === 'seed' && role === 'seed' && config.port === 0) {
    throw new ConfigError(
      'GRANARY_PORT',
      'the seed node needs a fixed GRANARY_PORT: others dial it',
    );
  }
  if (role === 'seed' && provider !== 'seed') {
    throw new ConfigError('GRANARY_PROVIDER', 'a seed node only runs with GRANARY_PROVIDER=seed');
  }
  return config;
}
