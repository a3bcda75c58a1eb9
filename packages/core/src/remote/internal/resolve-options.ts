import { InvalidOptionError } from '../../errors';
import type { SerializationRegistry } from '../../serialization/serialization-registry';
import { DEFAULT_REMOTE_LIMITS, type ResolvedRemoteLimits } from '../remote-limits';
import type { RemoteOptions, RemoteTlsOptions } from '../remote-options';
import { DEFAULT_REMOTE_OPTIONS } from '../remote-options';

/** Room around a large message's payload in its frame: ids, type name, headers. */
export const FRAME_OVERHEAD_BYTES = 64 * 1024;

/** RemoteOptions with every default applied and every number checked. */
export interface ResolvedRemoteOptions {
  host: string;
  port: number;
  /** False: no server; the node only dials (RemoteOptions.listen). */
  listen: boolean;
  advertisedHost: string;
  clusterName: string;
  memberId: string | undefined;
  secret: string | undefined;
  tls: RemoteTlsOptions | undefined;
  insecure: boolean;
  batchSize: number;
  maxMessageBytes: number;
  largeMessageBytes: number;
  maxLargeBytesInFlight: number;
  maxOutboundBytes: number;
  writeStallTimeoutMs: number;
  linkProbeMs: number;
  maxEndpoints: number;
  endpointDownTtlMs: number;
  logIntervalMs: number;
  connectTimeoutMs: number;
  handshakeTimeoutMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
  limits: ResolvedRemoteLimits;
  serialization: SerializationRegistry | undefined;
}

/**
 * Applies the defaults and checks every option.
 * @throws InvalidOptionError naming the option.
 */
export function resolveRemoteOptions(options: RemoteOptions): ResolvedRemoteOptions {
  const d = DEFAULT_REMOTE_OPTIONS;
  const host = options.host ?? d.host;
  const o: ResolvedRemoteOptions = {
    host,
    port: options.port ?? d.port,
    listen: options.listen ?? d.listen,
    advertisedHost: options.advertisedHost ?? host,
    clusterName: options.clusterName ?? d.clusterName,
    memberId: options.memberId,
    secret: options.secret,
    tls: options.tls,
    insecure: options.insecure ?? d.insecure,
    batchSize: options.batchSize ?? d.batchSize,
    maxMessageBytes: options.maxMessageBytes ?? d.maxMessageBytes,
    largeMessageBytes: options.largeMessageBytes ?? d.largeMessageBytes,
    maxLargeBytesInFlight: options.maxLargeBytesInFlight ?? d.maxLargeBytesInFlight,
    maxOutboundBytes: options.maxOutboundBytes ?? d.maxOutboundBytes,
    writeStallTimeoutMs: options.writeStallTimeoutMs ?? d.writeStallTimeoutMs,
    linkProbeMs: options.linkProbeMs ?? d.linkProbeMs,
    maxEndpoints: options.maxEndpoints ?? d.maxEndpoints,
    endpointDownTtlMs: options.endpointDownTtlMs ?? d.endpointDownTtlMs,
    logIntervalMs: options.logIntervalMs ?? d.logIntervalMs,
    connectTimeoutMs: options.connectTimeoutMs ?? d.connectTimeoutMs,
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? d.handshakeTimeoutMs,
    reconnect: { ...d.reconnect, ...options.reconnect },
    limits: { ...DEFAULT_REMOTE_LIMITS, ...options.limits },
    serialization: options.serialization,
  };
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
    throw new InvalidOptionError('port', `${o.port} is not a port`);
  for (const name of [
    'batchSize',
    'maxMessageBytes',
    'largeMessageBytes',
    'maxLargeBytesInFlight',
    'maxOutboundBytes',
    'writeStallTimeoutMs',
    'maxEndpoints',
    'endpointDownTtlMs',
    'logIntervalMs',
    'connectTimeoutMs',
    'handshakeTimeoutMs',
  ] as const) {
    atLeast(o[name], name, 1);
  }
  atLeast(o.linkProbeMs, 'linkProbeMs', 0);
  atLeast(o.reconnect.initialDelayMs, 'reconnect.initialDelayMs', 1);
  atLeast(o.reconnect.maxDelayMs, 'reconnect.maxDelayMs', o.reconnect.initialDelayMs);
  for (const [name, value] of Object.entries(o.limits)) atLeast(value, `limits.${name}`, 1);
  atLeast(o.largeMessageBytes, 'largeMessageBytes', 1024);
  // A chunk and a batch of small envelopes must each fit a frame.
  if (o.largeMessageBytes + FRAME_OVERHEAD_BYTES > o.limits.maxFrameBytes) {
    throw new InvalidOptionError(
      'largeMessageBytes',
      `${o.largeMessageBytes} leaves no room in a frame of limits.maxFrameBytes ` +
        `${o.limits.maxFrameBytes} (it needs ${FRAME_OVERHEAD_BYTES} bytes more)`,
    );
  }
  atLeast(o.maxLargeBytesInFlight, 'maxLargeBytesInFlight', o.maxMessageBytes);
  // One largest message must fit the budget of incomplete ones, or it could never be joined.
  const oneMessage = o.maxMessageBytes + FRAME_OVERHEAD_BYTES;
  if (options.limits?.maxIncompleteMessageBytes === undefined) {
    o.limits.maxIncompleteMessageBytes = Math.max(o.limits.maxIncompleteMessageBytes, oneMessage);
  }
  atLeast(o.limits.maxIncompleteMessageBytes, 'limits.maxIncompleteMessageBytes', oneMessage);
  return o;
}

function atLeast(value: number, option: string, min: number): void {
  if (!Number.isFinite(value) || value < min)
    throw new InvalidOptionError(option, `${value} is below ${min}`);
}
