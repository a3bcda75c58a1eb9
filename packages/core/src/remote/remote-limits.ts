/**
 * Bounds on what a peer may send this node. A peer that exceeds one loses that link (the
 * stream is closed with a typed reason it sees as the status, counted in `remote.stats` and
 * logged as a throttled summary); other peers do not notice. The matching grpc-js server and
 * channel options are derived from these.
 */
export interface RemoteLimits {
  /**
   * Largest frame (one gRPC message) accepted from an authenticated peer; grpc-js'
   * `grpc.max_receive_message_length`. Large messages travel in chunks below
   * `largeMessageBytes`, so frames stay small whatever `maxMessageBytes` is.
   * @default 1048576 (1 MiB)
   */
  maxFrameBytes?: number;
  /**
   * Largest frame before the peer is authenticated. A handshake frame is a few hundred bytes;
   * the bound is applied by the gRPC decoder before the bytes are buffered.
   * @default 4096
   */
  maxHandshakeBytes?: number;
  /**
   * Most envelopes in one frame (a peer's `batchSize` must not be above it).
   * @default 4096
   */
  maxEnvelopesPerFrame?: number;
  /**
   * Longest string of a frame: a type name, target id, sender address or sender id. A message
   * this node would send over it (or over the header limits below) fails at the sender with
   * RemoteLimitError instead of costing the link.
   * @default 4096
   */
  maxStringBytes?: number;
  /**
   * Most header entries on one envelope.
   * @default 64
   */
  maxHeaderEntries?: number;
  /**
   * Largest total of one envelope's header keys and values, in bytes.
   * @default 16384
   */
  maxHeaderBytes?: number;
  /**
   * Concurrent HTTP/2 streams on one inbound connection (`grpc.max_concurrent_streams`), and
   * streams a connection may start that no handshake authenticates, at once or one after
   * another (the next closes the connection). A node opens one per link, on a connection of
   * its own.
   * @default 16
   */
  maxStreamsPerConnection?: number;
  /**
   * Largest HTTP/2 header list of a stream (`grpc.max_metadata_size`), in bytes.
   * @default 16384
   */
  maxMetadataBytes?: number;
  /**
   * Open inbound TCP connections; more are closed as they arrive.
   * @default 1024
   */
  maxConnections?: number;
  /**
   * Inbound connections without an authenticated link yet; at the bound the oldest of them from
   * the source address that holds the most is closed to make room, so members can still get in
   * while something floods the port (a flood from one address evicts its own connections).
   * @default 128
   */
  maxPendingConnections?: number;
  /**
   * An inbound connection with no authenticated link for this long is closed (one that never
   * starts a stream, or whose links all ended).
   * @default 30000
   */
  idleConnectionTimeoutMs?: number;
  /**
   * Bytes that large messages still arriving in chunks may hold, over all of this node's links
   * (a link joins one at a time, in a buffer of the size its first chunk states, at most
   * `maxMessageBytes` and 64 KiB of envelope). A first chunk that finds no room closes the
   * links whose messages went longest without a chunk until it fits (RemoteLimitError; their
   * peers' calls fail with EndpointUnavailableError). Not below `maxMessageBytes` + 64 KiB;
   * left unset, raised to that when `maxMessageBytes` needs it.
   * @default 67108864 (64 MiB)
   */
  maxIncompleteMessageBytes?: number;
  /**
   * A large message that gets no chunk for this long (while this node reads its link) is
   * dropped and its link closed, as for `maxIncompleteMessageBytes`.
   * @default 30000
   */
  incompleteMessageTimeoutMs?: number;
}

/** Defaults of {@link RemoteLimits}. */
export const DEFAULT_REMOTE_LIMITS = {
  maxFrameBytes: 1024 * 1024,
  maxHandshakeBytes: 4096,
  maxEnvelopesPerFrame: 4096,
  maxStringBytes: 4096,
  maxHeaderEntries: 64,
  maxHeaderBytes: 16 * 1024,
  maxStreamsPerConnection: 16,
  maxMetadataBytes: 16 * 1024,
  maxConnections: 1024,
  maxPendingConnections: 128,
  idleConnectionTimeoutMs: 30_000,
  maxIncompleteMessageBytes: 64 * 1024 * 1024,
  incompleteMessageTimeoutMs: 30_000,
} as const satisfies Required<RemoteLimits>;

/** Limits with every field set. */
export type ResolvedRemoteLimits = { -readonly [K in keyof RemoteLimits]-?: number };
