import { timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { EndpointHost } from './endpoint';
import { CHANNEL_OPTIONS, Endpoint } from './endpoint';
import { channelCredentials, serverCredentials } from './internal/credentials';
import type { RemoteLogger } from './internal/logger';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import type { StreamLinkHandlers } from './internal/stream-link';
import { StreamLink } from './internal/stream-link';
import type { WireBatch, WireFrame, WireHandshake } from './internal/wire';
import { CONNECT_METHOD, PROTOCOL_VERSION, encodeFrame } from './internal/wire';
import type { RemoteTlsOptions } from './remote-options';

/** How long a graceful server shutdown may wait for peers to end their streams. */
const SERVER_SHUTDOWN_GRACE_MS = 2000;

const identity = (bytes: Buffer): Buffer => bytes;

/** Resolved settings of the transport. */
export interface TransportConfig {
  host: string;
  port: number;
  advertisedHost: string;
  clusterName: string;
  memberId: string | undefined;
  secret: string | undefined;
  tls: RemoteTlsOptions | undefined;
  batchSize: number;
  connectTimeoutMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
}

/** What the transport hands up to the remote. */
export interface TransportEvents {
  /** `receivedAt`: Date.now() when the frame arrived. */
  batch(batch: WireBatch, fromAddress: string, receivedAt: number): void;
  reject(address: string, env: OutboundEnvelope, error: Error): void;
  up(address: string): void;
  down(address: string, error: Error): void;
}

/** Counters of things that went wrong on the wire; each is also logged. */
export interface TransportStats {
  corruptFrames: number;
  refusedHandshakes: number;
}

/**
 * The gRPC side of a node: the server peers dial, and one {@link Endpoint} per peer address
 * this node talks to. Validates handshakes (cluster name, protocol version, secret) and routes
 * decoded batches from any stream up to the remote.
 */
export class EndpointManager implements EndpointHost {
  readonly credentials: grpc.ChannelCredentials;
  readonly channelOptions: grpc.ChannelOptions;
  readonly batchSize: number;
  readonly connectTimeoutMs: number;
  readonly reconnect: { initialDelayMs: number; maxDelayMs: number };
  readonly linkHandlers: StreamLinkHandlers;
  readonly stats: TransportStats = { corruptFrames: 0, refusedHandshakes: 0 };
  handshake!: WireHandshake;
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly inbound = new Set<StreamLink>();
  private server: grpc.Server | undefined;
  private closing = false;

  constructor(
    private readonly config: TransportConfig,
    private readonly events: TransportEvents,
    readonly logger: RemoteLogger,
  ) {
    this.credentials = channelCredentials(config.tls);
    this.channelOptions = config.tls?.serverNameOverride
      ? { ...CHANNEL_OPTIONS, 'grpc.ssl_target_name_override': config.tls.serverNameOverride }
      : CHANNEL_OPTIONS;
    this.batchSize = config.batchSize;
    this.connectTimeoutMs = config.connectTimeoutMs;
    this.reconnect = config.reconnect;
    this.linkHandlers = {
      onFrame: (link, frame, receivedAt) => this.onFrame(link, frame, receivedAt),
      onClose: () => undefined,
      onCorruptFrame: (link, error) => this.onCorruptFrame(link, error),
    };
  }

  /** Binds the server; resolves with the advertised `host:port`. */
  async start(): Promise<string> {
    const server = new grpc.Server(CHANNEL_OPTIONS);
    server.addService(
      {
        Connect: {
          path: CONNECT_METHOD,
          requestStream: true,
          responseStream: true,
          requestSerialize: identity,
          requestDeserialize: identity,
          responseSerialize: identity,
          responseDeserialize: identity,
        },
      },
      { Connect: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.accept(call) },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(
        hostPort(this.config.host, this.config.port),
        serverCredentials(this.config.tls),
        (err, bound) => (err ? reject(err) : resolve(bound)),
      ),
    );
    this.server = server;
    const address = hostPort(this.config.advertisedHost, port);
    this.handshake = {
      clusterName: this.config.clusterName,
      memberId: this.config.memberId ?? address,
      address,
      protocolVersion: PROTOCOL_VERSION,
      secret: this.config.secret ?? '',
    };
    return address;
  }

  /** The endpoint for a peer address, created on first use. */
  endpoint(address: string): Endpoint {
    let endpoint = this.endpoints.get(address);
    if (!endpoint) {
      endpoint = new Endpoint(address, this);
      this.endpoints.set(address, endpoint);
    }
    return endpoint;
  }

  reject(address: string, env: OutboundEnvelope, error: Error): void {
    this.events.reject(address, env, error);
  }

  up(address: string): void {
    this.events.up(address);
  }

  down(address: string, error: Error): void {
    this.events.down(address, error);
  }

  /** Flushes and closes every stream with a goodbye, then stops the server. */
  async shutdown(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const goodbye = encodeFrame({ goodbye: { address: this.handshake?.address ?? '' } });
    for (const endpoint of this.endpoints.values()) endpoint.close(goodbye);
    for (const link of this.inbound) {
      link.write(goodbye);
      link.end();
    }
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, SERVER_SHUTDOWN_GRACE_MS);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  private accept(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    let accepted = false;
    const link: StreamLink = new StreamLink(call, 'server', '', {
      onFrame: (l, frame, receivedAt) => {
        if (accepted) return this.onFrame(l, frame, receivedAt);
        clearTimeout(timer);
        accepted = this.onHandshake(l, frame);
      },
      onClose: (l, error) => {
        clearTimeout(timer);
        this.inbound.delete(l);
        if (accepted) this.endpoints.get(l.peerAddress)?.linkClosed(l, error);
      },
      onCorruptFrame: (l, error) => this.onCorruptFrame(l, error),
    });
    if (this.closing) return link.abort(grpc.status.UNAVAILABLE, 'node is shutting down');
    this.inbound.add(link);
    const timer = setTimeout(() => {
      this.logger.warn({ peer: call.getPeer() }, 'remote peer sent no handshake in time; closing');
      link.abort(
        grpc.status.DEADLINE_EXCEEDED,
        `no handshake within ${this.connectTimeoutMs} ms (connectTimeoutMs)`,
      );
    }, this.connectTimeoutMs);
  }

  private onHandshake(link: StreamLink, frame: WireFrame): boolean {
    const hs = frame.handshake;
    const reason = hs ? this.refusalReason(hs) : 'the first frame must be a handshake';
    if (reason) {
      this.stats.refusedHandshakes++;
      this.logger.error(
        { peer: hs?.address, memberId: hs?.memberId, reason },
        'remote handshake refused',
      );
      link.write(
        encodeFrame({ handshakeAck: { accepted: false, reason, memberId: '', address: '' } }),
      );
      link.abort(grpc.status.PERMISSION_DENIED, `handshake refused: ${reason}`);
      return false;
    }
    link.peerAddress = hs!.address;
    link.write(
      encodeFrame({
        handshakeAck: {
          accepted: true,
          reason: '',
          memberId: this.handshake.memberId,
          address: this.handshake.address,
        },
      }),
    );
    this.endpoint(link.peerAddress).attach(link);
    return true;
  }

  private refusalReason(hs: WireHandshake): string | undefined {
    if (hs.protocolVersion !== PROTOCOL_VERSION) {
      return `protocol version ${hs.protocolVersion} is not supported (this node speaks ${PROTOCOL_VERSION})`;
    }
    if (hs.clusterName !== this.config.clusterName) {
      return `cluster name '${hs.clusterName}' does not match '${this.config.clusterName}' (clusterName)`;
    }
    if (this.config.secret !== undefined && !sameSecret(hs.secret, this.config.secret)) {
      return 'shared secret does not match (secret)';
    }
    if (!hs.address) return 'the handshake has no address';
    return undefined;
  }

  private onFrame(link: StreamLink, frame: WireFrame, receivedAt: number): void {
    if (frame.batch) this.events.batch(frame.batch, link.peerAddress, receivedAt);
    else if (frame.goodbye) {
      // The peer may have answered on another link (both dialled): those frames first, or its
      // replies would arrive after its requests were failed as unanswered (and retried).
      const address = link.peerAddress;
      for (const l of this.inbound) if (l.peerAddress === address) l.drain();
      const endpoint = this.endpoints.get(address);
      endpoint?.drainLink();
      endpoint?.peerLeft();
    } else {
      this.onCorruptFrame(link, new Error('handshake frame after the handshake'));
      link.abort(grpc.status.INVALID_ARGUMENT, 'unexpected handshake frame');
    }
  }

  private onCorruptFrame(link: StreamLink, error: Error): void {
    this.stats.corruptFrames++;
    this.logger.error(
      { peer: link.peerAddress || undefined, err: error.message },
      'corrupt remote frame; closing that stream',
    );
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `host:port`, with brackets around an IPv6 host. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}
