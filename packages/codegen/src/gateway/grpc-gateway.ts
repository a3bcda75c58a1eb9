import * as grpc from '@grpc/grpc-js';
import {
  BAGGAGE_HEADER,
  InvalidArgumentError,
  InvalidOptionError,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  createStderrLogger,
  incomingTraceContext,
  type Logger,
} from '@granary/core';
import { rejectUnknownOptions, type ConnectionGuard, type EventLog } from '@granary/core/internal';
import type { ClusterLike } from '../runtime/cluster-like';
import { grainInvoke, isGrainInvokeResult, payloadOf } from '../runtime/grain-invoke';
import { definedServices, type ServiceDefinition } from '../runtime/service';
import { listenCapped } from './connection-cap';
import { grpcStatusOf } from './grpc-status';
import { ReceiveSlots, receiveSlotsInterceptor, type CallHooks } from './receive-slots';

/** Metadata header naming the grain's identity within its kind (the service). */
export const IDENTITY_HEADER = 'granary-identity';
/** Trailer carrying the Granary error code of a failed call (also first in the details). */
export const ERROR_CODE_TRAILER = 'granary-error-code';
/** Trailer carrying the code of the error a grain threw (for `ERR_GRAIN`). */
export const ORIGINAL_CODE_TRAILER = 'granary-error-original-code';

/** Options of {@link GrpcGateway.start}. */
export interface GrpcGatewayOptions {
  /** Where calls go: a `Cluster` member, or a `GranaryClient`. Not closed by the gateway. */
  cluster: ClusterLike;
  /**
   * Interface to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Port; 0 picks a free one (`gateway.port` shows it).
   * @default 0
   */
  port?: number;
  /**
   * Kind names (the services' full names, `package.Service`) to serve.
   * @default every service of the generated modules loaded in this process
   */
  services?: readonly string[];
  /**
   * TLS credentials of the server (`grpc.ServerCredentials.createSsl(...)`).
   * @default insecure (plaintext), allowed on loopback only unless `insecure` is set
   */
  credentials?: grpc.ServerCredentials;
  /**
   * Listen in plaintext on a non-loopback interface. Without it such a start throws
   * InvalidOptionError: anyone who can reach the port could call every grain.
   * @default false
   */
  insecure?: boolean;
  /**
   * Deadline of a call whose client sent no `grpc-timeout`.
   * @default the cluster's requestTimeoutMs
   */
  defaultTimeoutMs?: number;
  /**
   * Largest request or response message, bytes.
   * @default 4194304 (4 MiB, gRPC's default)
   */
  maxMessageBytes?: number;
  /**
   * Calls whose request is still arriving, at once; the others wait to read theirs (paused, so
   * HTTP/2 flow control holds what their clients send). With maxMessageBytes it bounds the
   * memory partly received requests hold (16 x 4 MiB by default); a request that arrives in one
   * piece holds its slot for an event-loop turn or two.
   * @default 16
   */
  maxCallsReceiving?: number;
  /**
   * A call's request must have arrived whole (through the client's end of stream) this long
   * after the call started, or the call ends with RESOURCE_EXHAUSTED (GatewayLimitError): a
   * client trickling, or stopping midway, holds nothing longer.
   * @default 10000
   */
  receiveTimeoutMs?: number;
  /**
   * Calls open at once on one HTTP/2 connection (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; grpc-js
   * advertises no bound of its own).
   * @default 100
   */
  maxStreamsPerConnection?: number;
  /**
   * A connection with no call open (silent since it connected, or idle between calls) is closed
   * after this long (grpc-js' `grpc.max_connection_idle_ms`, with a GOAWAY: a client dials again
   * at its next call). grpc-js keeps such a connection for ever by default, so silent sockets
   * piled up to the process's file descriptor limit, shared with the member's own connections.
   * @default 60000
   */
  idleConnectionTimeoutMs?: number;
  /**
   * TCP connections open at once (each a file descriptor the member's own connections share).
   * At the bound a new one closes the oldest that has sent no whole call yet (a flood's silent
   * sockets cannot lock clients out), or is closed as it arrives when all have; counted in
   * `gateway.stats.refusedConnections`, logged as a warn line at most once per 10 s.
   * @default 1024 (the remote port's `limits.maxConnections`)
   */
  maxConnections?: number;
  /**
   * Where the gateway logs the connections it refuses.
   * @default JSON lines of warn and above on stderr
   */
  logger?: Logger;
}

/** Counters of {@link GrpcGateway.stats}. */
export interface GrpcGatewayStats {
  /** TCP connections open now. */
  connections: number;
  /** Connections closed at `maxConnections` (a new one, or one that had made no call). */
  refusedConnections: number;
  /** Connections that sent bytes and ended with no whole call (HTTP/1, garbage, idle after the preface). */
  closedBeforeUse: number;
}

/** Defaults of {@link GrpcGatewayOptions}. */
export const DEFAULT_GRPC_GATEWAY_OPTIONS = {
  host: '127.0.0.1',
  port: 0,
  insecure: false,
  maxMessageBytes: 4 * 1024 * 1024,
  maxCallsReceiving: 16,
  receiveTimeoutMs: 10_000,
  maxStreamsPerConnection: 100,
  idleConnectionTimeoutMs: 60_000,
  maxConnections: 1024,
} as const;

/** Every option GrpcGateway.start knows (the compiler keeps it in step with the interface). */
const GRPC_GATEWAY_OPTION_KEYS = {
  cluster: true,
  host: true,
  port: true,
  services: true,
  credentials: true,
  insecure: true,
  defaultTimeoutMs: true,
  maxMessageBytes: true,
  maxCallsReceiving: true,
  receiveTimeoutMs: true,
  maxStreamsPerConnection: true,
  idleConnectionTimeoutMs: true,
  maxConnections: true,
  logger: true,
} as const satisfies Record<keyof GrpcGatewayOptions, true>;

const passThrough = (bytes: Buffer): Buffer => bytes;

/**
 * Serves the services of generated grain kinds as standard gRPC services, each under its
 * `.proto`'s own `package.Service/Method`: any language's gRPC client (or grpcurl) calls a grain
 * with nothing but the `.proto`, naming the grain in the `granary-identity` metadata header.
 * The deadline comes from `grpc-timeout`; cancelling the call aborts the grain call. Request
 * and response bytes pass through untouched (the grain decodes and encodes them); a Granary
 * error becomes a gRPC status (`grpcStatusOf`), with the error code first in the details and in
 * the `granary-error-code` trailer. A W3C `traceparent` (`tracestate`, `baggage`) in the
 * metadata makes the grain call join the caller's trace.
 *
 * @example
 * const gateway = await GrpcGateway.start({ cluster, port: 50051 });
 * // grpcurl -plaintext -proto protos.proto -H 'granary-identity: p-1' \
 * //   -d '{"cnt": 1}' 127.0.0.1:50051 messages.Ponger/Ping
 * await gateway.close(); // before cluster.shutdown()
 */
export class GrpcGateway {
  private closed = false;

  private constructor(
    private readonly server: grpc.Server,
    private readonly guard: ConnectionGuard,
    private readonly events: EventLog,
    /** The port it listens on. */
    readonly port: number,
    /** The kind names it serves. */
    readonly services: readonly string[],
  ) {}

  /** Binds the server and serves the services. */
  static async start(options: GrpcGatewayOptions): Promise<GrpcGateway> {
    const o = { ...DEFAULT_GRPC_GATEWAY_OPTIONS, ...options };
    if (typeof o.cluster?.request !== 'function') {
      throw new InvalidOptionError('cluster', 'needs a Cluster or a GranaryClient');
    }
    // { prot: 50051 } listened on a random port, { service: [...] } served every service.
    rejectUnknownOptions('GrpcGateway.start', options, GRPC_GATEWAY_OPTION_KEYS);
    if (o.credentials === undefined && !o.insecure && !isLoopback(o.host)) {
      throw new InvalidOptionError(
        'credentials',
        `the gateway would listen on ${o.host} in plaintext: give TLS credentials, or set insecure: true on a closed network`,
      );
    }
    for (const name of [
      'maxCallsReceiving',
      'receiveTimeoutMs',
      'maxStreamsPerConnection',
      'idleConnectionTimeoutMs',
      'maxConnections',
    ] as const) {
      if (!(Number.isSafeInteger(o[name]) && o[name] > 0)) {
        throw new InvalidOptionError(name, `must be a positive integer, got ${String(o[name])}`);
      }
    }
    const services = selectServices(o.services);
    const slots = new ReceiveSlots(o.maxCallsReceiving);
    // A connection that sent a whole call is a client's, never evicted (set once listening).
    let guarded: ConnectionGuard | undefined = undefined;
    const calls: CallHooks = {
      opened: (peer) => guarded?.callOpened(peer),
      whole: (peer) => guarded?.proven(peer),
    };
    const server = new grpc.Server({
      'grpc.max_receive_message_length': o.maxMessageBytes,
      'grpc.max_send_message_length': o.maxMessageBytes,
      'grpc.max_concurrent_streams': o.maxStreamsPerConnection,
      'grpc.max_connection_idle_ms': o.idleConnectionTimeoutMs,
      interceptors: [receiveSlotsInterceptor(slots, o.receiveTimeoutMs, toServiceError, calls)],
    });
    for (const service of services) {
      const { definition, handlers } = serve(service, o.cluster, o.defaultTimeoutMs);
      server.addService(definition, handlers);
    }
    const { guard, events, port } = await listenCapped(
      server,
      o.credentials ?? grpc.ServerCredentials.createInsecure(),
      o.host,
      o.port,
      { maxConnections: o.maxConnections, idleConnectionTimeoutMs: o.idleConnectionTimeoutMs },
      o.logger ?? createStderrLogger(),
    );
    guarded = guard;
    const kinds = services.map((s) => s.kindName);
    return new GrpcGateway(server, guard, events, port, kinds);
  }

  /** Connections open now, those refused at `maxConnections`, those ended before any use. */
  get stats(): GrpcGatewayStats {
    return {
      connections: this.guard.size,
      refusedConnections: this.events.stats.refusedConnections,
      closedBeforeUse: this.events.stats.closedBeforeUse,
    };
  }

  /** Stops taking calls, lets running ones finish (up to `graceMs`), and closes the server. */
  async close(graceMs = 2000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    await this.guard.close();
    this.events.close();
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** The service definitions to serve; throws for a name no loaded generated module defines. */
function selectServices(
  names: readonly string[] | undefined,
): ServiceDefinition<unknown, unknown>[] {
  const all = definedServices();
  if (names === undefined) {
    if (all.size === 0) {
      throw new InvalidOptionError(
        'services',
        'no generated service is loaded in this process: import the generated modules first',
      );
    }
    return [...all.values()];
  }
  return names.map((name) => {
    const service = all.get(name);
    if (service === undefined) {
      throw new InvalidOptionError(
        'services',
        `service ${name} is not defined by a loaded generated module (loaded: ${[...all.keys()].join(', ') || 'none'})`,
      );
    }
    return service;
  });
}

/** The grpc-js service definition and unary handlers of one service. */
function serve(
  service: ServiceDefinition<unknown, unknown>,
  cluster: ClusterLike,
  defaultTimeoutMs: number | undefined,
): { definition: grpc.ServiceDefinition; handlers: grpc.UntypedServiceImplementation } {
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const path of service.methods.keys()) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    definition[name] = {
      path: `/${path}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: passThrough,
      requestDeserialize: passThrough,
      responseSerialize: passThrough,
      responseDeserialize: passThrough,
    };
    handlers[name] = unaryHandler(service.kindName, path, cluster, defaultTimeoutMs);
  }
  return { definition, handlers };
}

function unaryHandler(
  kind: string,
  path: string,
  cluster: ClusterLike,
  defaultTimeoutMs: number | undefined,
): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    const identity = call.metadata.get(IDENTITY_HEADER)[0];
    if (typeof identity !== 'string' || identity.length === 0) {
      const err = new InvalidArgumentError(
        IDENTITY_HEADER,
        `the call to ${path} names no grain: send the grain's identity in the '${IDENTITY_HEADER}' metadata header`,
      );
      return callback(toServiceError(err));
    }
    const deadline = call.getDeadline();
    const due = deadline instanceof Date ? deadline.getTime() : deadline;
    const timeoutMs = Number.isFinite(due) ? Math.max(1, due - Date.now()) : defaultTimeoutMs;
    const abort = new AbortController();
    // grpc-js emits 'cancelled' after every call too, once its status is sent: only a call
    // still running is aborted (else each call paid for an Error, its stack and an abort).
    let running = true;
    call.on('cancelled', () => {
      if (running) abort.abort(new Error('the gRPC client cancelled the call'));
    });
    const traceContext = traceContextOfMetadata(call.metadata);
    cluster
      .request<unknown>(kind, identity, grainInvoke(path, call.request), {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(traceContext === undefined ? {} : { traceContext }),
        signal: abort.signal,
      })
      .then(
        (reply) => {
          running = false;
          const payload = isGrainInvokeResult(reply) ? payloadOf(reply) : undefined;
          if (payload === undefined) {
            return callback({
              code: grpc.status.INTERNAL,
              details: `[ERR_INVALID_REPLY] grain ${kind}/${identity} answered ${path} with something other than its response`,
            });
          }
          callback(null, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
        },
        (err: unknown) => {
          running = false;
          callback(toServiceError(err));
        },
      );
  };
}

/** The W3C trace context fields a gRPC client sent as metadata. */
const TRACE_HEADERS = [TRACEPARENT_HEADER, TRACESTATE_HEADER, BAGGAGE_HEADER] as const;

/**
 * The trace context the grain call joins: the caller's (`traceparent`, `tracestate` and
 * `baggage` in the metadata, as OpenTelemetry's gRPC propagation sends them), unless a span is
 * active already (an instrumentation of the gRPC server made one under the caller's).
 */
function traceContextOfMetadata(metadata: grpc.Metadata): ReturnType<typeof incomingTraceContext> {
  let header: Record<string, string> | undefined;
  for (const name of TRACE_HEADERS) {
    const value = metadata.get(name)[0];
    if (typeof value === 'string' && value !== '') (header ??= {})[name] = value;
  }
  return header === undefined ? undefined : incomingTraceContext(header);
}

function toServiceError(err: unknown): grpc.StatusObject {
  const s = grpcStatusOf(err);
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_TRAILER, s.errorCode);
  if (s.originalCode !== undefined) metadata.set(ORIGINAL_CODE_TRAILER, s.originalCode);
  return { code: s.code, details: s.details, metadata };
}
