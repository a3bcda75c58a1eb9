import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { Clock } from '../clock';
import type { EndpointHost } from './endpoint';
import { CHANNEL_OPTIONS, Endpoint } from './endpoint';
import { channelCredentials, serverCredentials } from './internal/credentials';
import type { RemoteLogger } from './internal/logger';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import type { HandshakeOutcome, ServerHandshakeHost } from './internal/server-handshake';
import { ServerHandshake } from './internal/server-handshake';
import type { StreamLinkHandlers } from './internal/stream-link';
import { StreamLink } from './internal/stream-link';
import type { WireBatch, WireFrame } from './internal/wire';
import { CONNECT_METHOD, encodeFrame } from './internal/wire';
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
  handshakeTimeoutMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
  /** The system's clock (deadlines on the wire, arrival stamps). */
  clock: Clock;
}

/** What the transport hands up to the remote. */
export interface TransportEvents {
  /** `receivedAt`: clock.now() when the frame arrived. */
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
 * this node talks to. Authenticates the peers that dial it (ServerHandshake: protocol version,
 * cluster name, proof of the secret, certificate, one live link per address and member id) and
 * routes decoded batches from any stream up to the remote.
 */
export class EndpointManager implements EndpointHost, ServerHandshakeHost {
  readonly credentials: grpc.ChannelCredentials;
  readonly channelOptions: grpc.ChannelOptions;
  readonly batchSize: number;
  readonly connectTimeoutMs: number;
  readonly reconnect: { initialDelayMs: number; maxDelayMs: number };
  readonly linkHandlers: StreamLinkHandlers;
  readonly clock: Clock;
  readonly stats: TransportStats = { corruptFrames: 0, refusedHandshakes: 0 };
  readonly clusterName: string;
  readonly secret: string | undefined;
  readonly verifyCertificates: boolean;
  /** This node's member id and advertised address (set by start). */
  memberId = '';
  address = '';
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly inbound = new Set<StreamLink>();
  /** Authenticated inbound links by the address and by the member id they state. */
  private readonly byAddress = new Map<string, StreamLink>();
  private readonly byMember = new Map<string, StreamLink>();
  private server: grpc.Server | undefined;
  private closing = false;

  constructor(
    private readonly config: TransportConfig,
    private readonly events: TransportEvents,
    readonly logger: RemoteLogger,
  ) {
    this.clusterName = config.clusterName;
    this.secret = config.secret;
    this.verifyCertificates = config.tls?.requireClientCert === true;
    this.credentials = channelCredentials(config.tls);
    this.channelOptions = config.tls?.serverNameOverride
      ? { ...CHANNEL_OPTIONS, 'grpc.ssl_target_name_override': config.tls.serverNameOverride }
      : CHANNEL_OPTIONS;
    this.batchSize = config.batchSize;
    this.connectTimeoutMs = config.connectTimeoutMs;
    this.reconnect = config.reconnect;
    this.clock = config.clock;
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
    this.address = address;
    this.memberId = this.config.memberId ?? address;
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
    const goodbye = encodeFrame({ goodbye: { address: this.address } });
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

  /** True while another live authenticated inbound link states this address or member id. */
  isHeld(address: string, memberId: string): boolean {
    const a = this.byAddress.get(address);
    const m = this.byMember.get(memberId);
    return (a !== undefined && !a.isClosed) || (m !== undefined && !m.isClosed);
  }

  private accept(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const handshake = new ServerHandshake(this, () => peerCertificateOf(call));
    let open = false;
    const link: StreamLink = new StreamLink(
      call,
      'server',
      '',
      {
        onFrame: (l, frame, receivedAt) => {
          if (open) return this.onFrame(l, frame, receivedAt);
          const step = handshake.step(frame);
          if (step.reply) l.write(encodeFrame(step.reply));
          if (step.outcome.kind === 'pending') return;
          clearTimeout(timer);
          if (step.outcome.kind === 'refused') return this.refuse(l, step.outcome);
          open = true;
          this.opened(l, step.outcome.address, step.outcome.memberId);
        },
        onClose: (l, error) => {
          clearTimeout(timer);
          this.inbound.delete(l);
          if (!open) return;
          if (this.byAddress.get(l.peerAddress) === l) this.byAddress.delete(l.peerAddress);
          if (this.byMember.get(l.peerMemberId) === l) this.byMember.delete(l.peerMemberId);
          this.endpoints.get(l.peerAddress)?.linkClosed(l, error);
        },
        onCorruptFrame: (l, error) => this.onCorruptFrame(l, error),
      },
      this.clock,
    );
    if (this.closing) return link.abort(grpc.status.UNAVAILABLE, 'node is shutting down');
    this.inbound.add(link);
    const timer = setTimeout(() => {
      this.stats.refusedHandshakes++;
      this.logger.warn({ peer: call.getPeer() }, 'remote peer sent no handshake in time; closing');
      link.abort(
        grpc.status.DEADLINE_EXCEEDED,
        `no handshake within ${this.config.handshakeTimeoutMs} ms (handshakeTimeoutMs)`,
      );
    }, this.config.handshakeTimeoutMs);
  }

  private refuse(link: StreamLink, outcome: Extract<HandshakeOutcome, { kind: 'refused' }>): void {
    this.stats.refusedHandshakes++;
    this.logger.error(
      {
        peer: outcome.address,
        memberId: outcome.memberId,
        refusal: outcome.refusal,
        reason: outcome.reason,
      },
      'remote handshake refused',
    );
    link.abort(grpc.status.PERMISSION_DENIED, `handshake refused: ${outcome.reason}`);
  }

  /** An authenticated peer: its link carries batches, and may serve as our way to it. */
  private opened(link: StreamLink, address: string, memberId: string): void {
    link.peerAddress = address;
    link.peerMemberId = memberId;
    this.byAddress.set(address, link);
    this.byMember.set(memberId, link);
    this.endpoint(address).attach(link);
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

/** `host:port`, with brackets around an IPv6 host. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The client certificate of a TLS connection, if it presented one that verified. */
function peerCertificateOf(
  call: grpc.ServerDuplexStream<Buffer, Buffer>,
): PeerCertificate | undefined {
  return call.getAuthContext()?.sslPeerCertificate;
}
