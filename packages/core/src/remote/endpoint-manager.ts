import * as grpc from '@grpc/grpc-js';
import type { Clock } from '../clock';
import { EndpointUnavailableError, type HandshakeError } from '../errors';
import type { EndpointHost } from './endpoint';
import { Endpoint } from './endpoint';
import type { ConnectionGuard } from './internal/connection-guard';
import { channelCredentials } from './internal/credentials';
import { EventLog, type RemoteStats } from './internal/event-log';
import { channelOptions } from './internal/grpc-options';
import { closeServer, listenServer } from './internal/grpc-server';
import { reportCorruptFrame, reportViolation } from './internal/link-reports';
import { LinkRoute } from './internal/link-route';
import { LinkSender } from './internal/link-sender';
import type { LinkSenderHost } from './internal/link-sender-host';
import type { RemoteLogger } from './internal/logger';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import { PeerSilence } from './internal/peer-silence';
import type { ResolvedRemoteOptions } from './internal/resolve-options';
import { Acceptor, type AcceptorHost } from './internal/acceptor';
import type { LinkConfig, StreamLinkHandlers } from './internal/stream-link';
import type { StreamLink } from './internal/stream-link';
import type { WireFrame } from './internal/wire';
import { encodeFrame } from './internal/wire';
import { RemoteTraffic } from './internal/remote-traffic';
import { AssemblyBudget } from './internal/assembly-budget';
import type { TransportEvents } from './transport-events';

export type { TransportEvents, TransportStats } from './transport-events';

/**
 * The gRPC side of a node: the server peers dial (behind a ConnectionGuard), and one
 * {@link Endpoint} per peer address this node talks to. Authenticates the peers that dial it
 * (ServerHandshake: protocol version, cluster name, proof of the secret, certificate, one live
 * link per address and member id), bounds what they send (LinkConfig), and routes decoded
 * batches from any link up to the remote.
 */
export class EndpointManager implements EndpointHost, AcceptorHost, LinkSenderHost {
  readonly events: EventLog;
  readonly credentials: grpc.ChannelCredentials;
  readonly channelOptions: grpc.ChannelOptions;
  readonly linkConfig: LinkConfig;
  readonly linkHandlers: StreamLinkHandlers;
  /** Frames and bytes of every link, in and out (the traffic metrics). */
  readonly traffic = new RemoteTraffic();
  /** The memory of incomplete large messages, shared by every link of the node. */
  private readonly assembly: AssemblyBudget;
  readonly clusterName: string;
  readonly secret: string | undefined;
  readonly verifyCertificates: boolean;
  /** This node's member id and advertised address (set by start). */
  memberId = '';
  address = '';
  private readonly endpoints = new Map<string, Endpoint>();
  /** The silence of each peer address an endpoint or a caller watches (see silenceOf). */
  private readonly silences = new Map<string, PeerSilence>();
  private readonly acceptor = new Acceptor(this);
  /** Each link's sender and route back (both go with the link). */
  private readonly senders = new WeakMap<StreamLink, LinkSender>();
  private readonly routes = new WeakMap<StreamLink, LinkRoute>();
  private server: grpc.Server | undefined;
  guard: ConnectionGuard | undefined = undefined;
  private sweep: NodeJS.Timeout | undefined;
  closing = false;

  constructor(
    readonly config: ResolvedRemoteOptions,
    private readonly transport: TransportEvents,
    readonly logger: RemoteLogger,
    /** The system's clock (deadlines on the wire, arrival stamps). */
    readonly clock: Clock,
  ) {
    this.events = new EventLog(logger, config.logIntervalMs);
    this.clusterName = config.clusterName;
    this.secret = config.secret;
    this.verifyCertificates = config.tls?.requireClientCert === true;
    this.credentials = channelCredentials(config.tls);
    this.channelOptions = channelOptions(config.limits, config.tls?.serverNameOverride);
    this.assembly = new AssemblyBudget(
      config.limits.maxIncompleteMessageBytes,
      config.limits.incompleteMessageTimeoutMs,
      this.traffic,
    );
    this.linkConfig = {
      ...config.limits,
      maxMessageBytes: config.maxMessageBytes,
      maxOutboundBytes: config.maxOutboundBytes,
      writeStallTimeoutMs: config.writeStallTimeoutMs,
      linkProbeMs: config.linkProbeMs,
      clock,
      traffic: this.traffic,
      assembly: this.assembly,
    };
    this.linkHandlers = {
      onFrame: (link, frame, receivedAt) => this.onFrame(link, frame, receivedAt),
      onClose: () => undefined,
      onCorruptFrame: (link, error) => reportCorruptFrame(this.events, link, error),
      onViolation: (link, error) => reportViolation(this.events, link, error),
    };
  }

  /** Endpoints (peers this node dials) it keeps now. */
  get endpointCount(): number {
    return this.endpoints.size;
  }

  /** Counters of wire events (each also logged, throttled). */
  get stats(): RemoteStats {
    return this.events.stats;
  }

  get batchSize(): number {
    return this.config.batchSize;
  }

  get largeMessageBytes(): number {
    return this.config.largeMessageBytes;
  }

  get maxLargeBytesInFlight(): number {
    return this.config.maxLargeBytesInFlight;
  }

  get maxOutboundBytes(): number {
    return this.config.maxOutboundBytes;
  }

  get maxEndpoints(): number {
    return this.config.maxEndpoints;
  }

  get connectTimeoutMs(): number {
    return this.config.connectTimeoutMs;
  }

  get reconnect(): { initialDelayMs: number; maxDelayMs: number } {
    return this.config.reconnect;
  }

  /** Binds the server (unless it does not listen); resolves with the advertised `host:port`. */
  async start(): Promise<string> {
    if (!this.config.listen) {
      // A client: it only dials, and its peers answer over the links it opened.
      this.address = hostPort(this.config.advertisedHost, this.config.port);
      this.memberId = this.config.memberId ?? this.address;
      return this.address;
    }
    const { server, guard, port } = await listenServer(
      this.config,
      (call) => this.acceptor.accept(call),
      this.events,
    );
    this.server = server;
    this.guard = guard;
    this.address = hostPort(this.config.advertisedHost, port);
    this.memberId = this.config.memberId ?? this.address;
    const every = Math.max(100, Math.min(5000, this.config.endpointDownTtlMs / 4));
    this.sweep = setInterval(() => this.removeStale(), every);
    this.sweep.unref();
    return this.address;
  }

  /**
   * The endpoint for a peer address, created on first use; undefined when maxEndpoints are
   * in use and none of them is down (nothing to evict).
   */
  endpoint(address: string): Endpoint | undefined {
    let endpoint = this.endpoints.get(address);
    if (endpoint) return endpoint;
    if (this.endpoints.size >= this.config.maxEndpoints && !this.evictOne()) return undefined;
    endpoint = new Endpoint(address, this, this.silences.get(address));
    this.endpoints.set(address, endpoint);
    this.silences.set(address, endpoint.silence);
    return endpoint;
  }

  /**
   * The silence of the peer at `address` (see PeerSilence): the same object for as long as an
   * endpoint to it exists, or will exist (one made later takes it over); undefined when as many
   * addresses as maxEndpoints are watched already.
   */
  silenceOf(address: string): PeerSilence | undefined {
    let silence = this.silences.get(address);
    if (silence === undefined && this.silences.size < this.config.maxEndpoints) {
      this.silences.set(address, (silence = new PeerSilence()));
    }
    return silence;
  }

  /** The endpoint of an address if one exists and has (or is opening) a link. */
  liveEndpoint(address: string): Endpoint | undefined {
    const endpoint = this.endpoints.get(address);
    return endpoint?.isLive ? endpoint : undefined;
  }

  /** The sender of a link, made on first use. */
  senderOf(link: StreamLink): LinkSender {
    let sender = this.senders.get(link);
    if (sender === undefined) {
      sender = new LinkSender(link, this);
      this.senders.set(link, sender);
    }
    return sender;
  }

  /** The route back over a link, made on first use. */
  routeOf(link: StreamLink): LinkRoute {
    let route = this.routes.get(link);
    if (route === undefined) {
      route = new LinkRoute(link, this);
      this.routes.set(link, route);
    }
    return route;
  }

  reject(address: string, env: OutboundEnvelope, error: Error): void {
    this.transport.reject(address, env, error);
  }

  up(address: string): void {
    this.transport.up(address);
  }

  down(address: string, error: Error): void {
    this.transport.down(address, error);
  }

  unreachable(address: string, error: Error, attempt: number): void {
    if (attempt > 1) {
      // The retries of a peer that stays away are not news (counted, logged at debug).
      this.events.stats.unreachableEndpoints++;
      this.logger.debug(
        { peer: address, err: error.message, attempt },
        'remote endpoint unreachable',
      );
      return;
    }
    this.events.report(
      'unreachableEndpoints',
      'warn',
      { peer: address, err: error.message, attempt },
      'remote endpoint unreachable',
    );
  }

  handshakeRefused(address: string, error: HandshakeError): void {
    this.events.report(
      'refusedHandshakes',
      'error',
      { peer: address, refusal: error.refusal, reason: error.message },
      'remote handshake refused by peer',
    );
  }

  abandoned(env: OutboundEnvelope): boolean {
    return this.transport.abandoned(env);
  }

  expired(env: OutboundEnvelope): void {
    this.transport.expired(env);
  }

  backpressure(address: string): void {
    this.events.report(
      'backpressureRejections',
      'warn',
      { peer: address },
      'large message not sent: the link had no room in time (maxLargeBytesInFlight)',
    );
  }

  /** Flushes and closes every stream with a goodbye, then stops the server. */
  async shutdown(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweep);
    const goodbye = encodeFrame({ goodbye: { address: this.address } });
    for (const endpoint of this.endpoints.values()) endpoint.close(goodbye);
    for (const link of this.acceptor.links) {
      this.senders.get(link)?.flushAll();
      link.write(goodbye);
      link.end();
    }
    this.events.close();
    this.assembly.stop();
    const server = this.server;
    if (!server) return;
    await closeServer(server, this.guard);
  }

  /** True while another live authenticated inbound link states this address or member id. */
  isHeld(address: string, memberId: string): boolean {
    return this.acceptor.isHeld(address, memberId);
  }

  /** An authenticated peer dialled us: its link may serve as our way to it. */
  opened(link: StreamLink): void {
    this.endpoint(link.peerAddress)?.attach(link);
  }

  /** An authenticated inbound link ended. */
  closed(link: StreamLink, error?: Error): void {
    this.endpoints.get(link.peerAddress)?.linkClosed(link, error);
  }

  private onFrame(link: StreamLink, frame: WireFrame, receivedAt: number): void {
    if (frame.batch) this.transport.batch(frame.batch, link, receivedAt);
    else if (frame.goodbye) {
      // The peer may have answered on another link (both dialled): those frames first, or its
      // replies would arrive after its requests were failed as unanswered (and retried).
      const address = link.peerAddress;
      for (const l of this.acceptor.links) if (l.peerAddress === address) l.drain();
      const endpoint = this.endpoints.get(address);
      endpoint?.drainLink();
      endpoint?.peerLeft();
    } else {
      reportCorruptFrame(this.events, link, new Error('handshake frame after the handshake'));
      link.abort(grpc.status.INVALID_ARGUMENT, 'unexpected handshake frame');
    }
  }

  /** Removes endpoints down (or idle after a link) longer than endpointDownTtlMs. */
  private removeStale(): void {
    const before = Date.now() - this.config.endpointDownTtlMs;
    for (const endpoint of this.endpoints.values()) {
      if (endpoint.downSince !== 0 && endpoint.downSince <= before) this.remove(endpoint);
    }
  }

  /** Makes room for one endpoint: removes the one down the longest; false if none is down. */
  private evictOne(): boolean {
    let oldest: Endpoint | undefined;
    for (const e of this.endpoints.values()) {
      if (e.downSince !== 0 && (oldest === undefined || e.downSince < oldest.downSince)) oldest = e;
    }
    if (oldest === undefined) return false;
    this.remove(oldest);
    return true;
  }

  private remove(endpoint: Endpoint): void {
    this.endpoints.delete(endpoint.address);
    this.silences.delete(endpoint.address);
    endpoint.close(undefined);
    this.events.report(
      'removedEndpoints',
      'info',
      { peer: endpoint.address },
      'remote endpoint removed: down longer than endpointDownTtlMs, or evicted at maxEndpoints',
    );
    this.transport.removed(endpoint);
  }
}

/** `host:port`, with brackets around an IPv6 host. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Why a send to a new address found no endpoint: maxEndpoints in use, none of them down. */
export function noRoomFor(address: string, maxEndpoints: number): EndpointUnavailableError {
  return new EndpointUnavailableError(
    address,
    `no endpoint for ${address}: ${maxEndpoints} are in use and none is down (maxEndpoints)`,
  );
}
