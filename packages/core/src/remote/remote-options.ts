import type { SerializationRegistry } from '../serialization/serialization-registry';
import type { RemoteLimits } from './remote-limits';

/**
 * TLS for the remote's gRPC server and the connections it opens. PEM strings or buffers.
 * With `ca`, `cert` and `key` every node presents its certificate and verifies the peer's
 * server certificate; `requireClientCert` makes it mutual TLS.
 */
export interface RemoteTlsOptions {
  /**
   * CA certificate(s) that sign the peers' certificates (both directions).
   * @default undefined (the system roots)
   */
  ca?: string | Buffer;
  /**
   * This node's certificate chain; required to serve TLS, and presented as client certificate.
   * @default undefined
   */
  cert?: string | Buffer;
  /**
   * This node's private key, paired with `cert`.
   * @default undefined
   */
  key?: string | Buffer;
  /**
   * Refuse incoming connections that do not present a certificate signed by `ca` (mutual TLS).
   * @default false
   */
  requireClientCert?: boolean;
  /**
   * Host name expected in peers' server certificates, when it differs from the address host
   * (e.g. 'localhost' for a node reached as 127.0.0.1).
   * @default undefined (the host of the peer's address)
   */
  serverNameOverride?: string;
}

/** Reconnect policy of an endpoint whose peer went away. */
export interface ReconnectOptions {
  /**
   * Delay before the first reconnect attempt.
   * @default 100
   */
  initialDelayMs?: number;
  /**
   * Cap of the doubling delay between attempts.
   * @default 5000
   */
  maxDelayMs?: number;
}

/** Options of `system.remote.start()` / `new Remote(system, options)`. */
export interface RemoteOptions {
  /**
   * Interface the gRPC server binds to.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Port the gRPC server binds to; 0 picks a free one (system.address then shows it).
   * @default 0
   */
  port?: number;
  /**
   * Bind a server at all. A node that only calls others (a cluster client that is not a member)
   * sets false: it states `advertisedHost:port` in its handshakes without listening there, and
   * the peers it dials answer over the links it opened.
   * @default true
   */
  listen?: boolean;
  /**
   * Host peers use to reach this node, when it differs from `host` (e.g. binding 0.0.0.0).
   * @default the value of `host`
   */
  advertisedHost?: string | undefined;
  /**
   * Nodes only talk to nodes of the same cluster name; a mismatch is refused at handshake.
   * @default 'granary'
   */
  clusterName?: string;
  /**
   * This node's member id, sent in the handshake and logged by peers.
   * @default the advertised address
   */
  memberId?: string;
  /**
   * Shared secret of the cluster (at least 16 bytes). Both ends of every link prove they know
   * it with an HMAC over nonces from both sides, binding each side's member id and address;
   * the secret itself never crosses the wire.
   * @default undefined (no secret)
   */
  secret?: string | undefined;
  /**
   * TLS or mutual TLS; plaintext when absent. With `requireClientCert` every peer must present
   * a certificate of `ca` that covers the host of the address it states (or its member id).
   * @default undefined
   */
  tls?: RemoteTlsOptions | undefined;
  /**
   * Listen on a non-loopback interface with neither `secret` nor mutual `tls`. Without it such
   * a start throws InsecureRemoteError: anyone who can reach the port could join and send
   * system messages. With it, one warning is logged at start.
   * @default false
   */
  insecure?: boolean;
  /**
   * Most envelopes coalesced into one frame for one endpoint. Smaller frames let two busy
   * peers work at once (each handles one frame per event-loop turn) instead of taking turns
   * on one large wave: with 1,000 requests in flight, 256 gave ~1.3-1.5x the throughput of
   * 1,000 (measured with grains-calls); 128 spends more per frame than it gains.
   * @default 256
   */
  batchSize?: number;
  /**
   * Largest serialized message, sent or received (MessageTooLargeError at the sender; a peer
   * that sends a larger one loses its link). Move larger data by reference (a key in external
   * storage) or in several messages.
   * @default 4194304 (4 MiB)
   */
  maxMessageBytes?: number;
  /**
   * Messages larger than this travel apart from the batched small ones: in chunks of this
   * size written between them, so a small call never waits behind a large message. A message
   * to a target that has a large one still in transit on the link waits behind it: messages
   * from one sender to one target keep their order whatever their sizes.
   * @default 65536
   */
  largeMessageBytes?: number;
  /**
   * Bytes of large messages queued on one link (the one being written included). A large
   * message that does not fit waits, up to its request's deadline (10 s for a plain send),
   * then fails with RemoteBackpressureError; so does one that finds as many bytes waiting.
   * @default 16777216 (16 MiB)
   */
  maxLargeBytesInFlight?: number;
  /**
   * Bytes written to one link that the peer has not taken yet (HTTP/2 flow control holds
   * them). Above it the peer is not reading: the link is closed and requests waiting on it
   * fail with EndpointUnavailableError caused by PeerNotReadingError.
   * @default 16777216 (16 MiB)
   */
  maxOutboundBytes?: number;
  /**
   * A link whose writes stay blocked this long (the peer takes nothing) is closed, as for
   * `maxOutboundBytes`.
   * @default 30000
   */
  writeStallTimeoutMs?: number;
  /**
   * A link whose peer has credited nothing it wrote for this long is probed, and again at this
   * period while the silence lasts: a TCP connect to the peer's address (answered by the peer's
   * kernel, so a peer whose event loop is busy or stopped still answers). A connect that gets no
   * answer, then one that does while the link is still silent, means a partition healed and the
   * old connection waits on TCP's backed-off retransmissions: it is closed (LinkLostError) and a
   * new one dialled, instead of carrying nothing for up to ~13 s more. 0 turns probing off.
   * @default 1000
   */
  linkProbeMs?: number;
  /**
   * Most peer endpoints kept; at the bound the one down the longest is removed, and if none is
   * down a send to a new address fails with EndpointUnavailableError.
   * @default 1024
   */
  maxEndpoints?: number;
  /**
   * An endpoint down (unreachable, reconnecting) this long is removed and stops reconnecting;
   * a later send dials afresh. Keep it above the membership TTL.
   * @default 30000
   */
  endpointDownTtlMs?: number;
  /**
   * Repeated wire events (refused handshakes, corrupt frames, exceeded limits, unreachable
   * endpoints) are logged once, then as one summary line per kind per interval with the
   * count; every event is counted in `remote.stats`.
   * @default 10000
   */
  logIntervalMs?: number;
  /** Bounds on what peers may send (see RemoteLimits). */
  limits?: RemoteLimits;
  /**
   * How long a connect attempt (TCP, TLS and handshake) may take before it counts as failed.
   * @default 5000
   */
  connectTimeoutMs?: number;
  /**
   * How long a peer that dialled this node may take to complete its handshake (hello, then
   * the proof) before the stream is closed.
   * @default 5000
   */
  handshakeTimeoutMs?: number;
  /** Reconnect policy after a peer went away. */
  reconnect?: ReconnectOptions;
  /**
   * Codecs for messages; the process-wide registry unless a test wants its own.
   * @default serialization (the process-wide registry)
   */
  serialization?: SerializationRegistry;
}

/** Defaults of {@link RemoteOptions} (serialization excepted: see the field). */
export const DEFAULT_REMOTE_OPTIONS = {
  host: '127.0.0.1',
  port: 0,
  listen: true,
  clusterName: 'granary',
  insecure: false,
  batchSize: 256,
  maxMessageBytes: 4 * 1024 * 1024,
  largeMessageBytes: 64 * 1024,
  maxLargeBytesInFlight: 16 * 1024 * 1024,
  maxOutboundBytes: 16 * 1024 * 1024,
  writeStallTimeoutMs: 30_000,
  linkProbeMs: 1000,
  maxEndpoints: 1024,
  endpointDownTtlMs: 30_000,
  logIntervalMs: 10_000,
  connectTimeoutMs: 5000,
  handshakeTimeoutMs: 5000,
  reconnect: { initialDelayMs: 100, maxDelayMs: 5000 },
} as const satisfies RemoteOptions;
