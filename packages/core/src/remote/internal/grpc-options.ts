import type * as grpc from '@grpc/grpc-js';
import type { ResolvedRemoteLimits } from '../remote-limits';
import { FAST_PATH_CHANNEL_OPTIONS } from './grpc-fast-path';

/**
 * Keepalive pings on every connection: a peer that vanished without closing (host crash,
 * partition) is noticed within ~30 s, which also frees its address for the `duplicate` check.
 */
const KEEPALIVE_TIME_MS = 20_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;

/**
 * HTTP/2 receive window of an authenticated link, per stream and per connection: what a peer
 * may have sent that this node has not read yet. HTTP/2's default (64 KiB less one byte) is
 * smaller than one chunk of a large message with its headers, so every chunk waited for a
 * WINDOW_UPDATE from the reader's event loop (a round trip through a busy loop per 64 KiB),
 * and the small batches queued behind it waited too. 1 MiB keeps the bytes a peer can push
 * into this process bounded (see docs/architecture.md) while a loaded loop no longer paces
 * the link.
 */
export const LINK_WINDOW_BYTES = 1024 * 1024;

/**
 * grpc-js server options matching the limits: the frame bound is enforced by its decoder
 * (before a frame is buffered), streams and header lists per connection by HTTP/2. What we
 * send is bounded by our own frames (chunks and batches), not by grpc-js.
 */
export function serverOptions(limits: ResolvedRemoteLimits): grpc.ServerOptions {
  return {
    'grpc.max_receive_message_length': limits.maxFrameBytes,
    'grpc.max_send_message_length': -1,
    'grpc.max_concurrent_streams': limits.maxStreamsPerConnection,
    'grpc.max_metadata_size': limits.maxMetadataBytes,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
  };
}

/**
 * grpc-js channel options of the connections a node dials: the same receive bounds, no
 * retries (the remote fails fast and reconnects itself), and a connection per endpoint (a
 * subchannel shared between nodes of one process would share one connection's limits).
 */
export function channelOptions(
  limits: ResolvedRemoteLimits,
  serverNameOverride: string | undefined,
): grpc.ChannelOptions {
  return {
    'grpc.max_receive_message_length': limits.maxFrameBytes,
    'grpc.max_send_message_length': -1,
    'grpc.max_metadata_size': limits.maxMetadataBytes,
    'grpc.enable_retries': 0,
    ...FAST_PATH_CHANNEL_OPTIONS,
    'grpc.use_local_subchannel_pool': 1,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    // The server we dialled is the peer we chose: its stream may use the larger window at once.
    'grpc-node.flow_control_window': LINK_WINDOW_BYTES,
    ...(serverNameOverride ? { 'grpc.ssl_target_name_override': serverNameOverride } : {}),
  };
}

/**
 * Lowers (or raises) the largest message grpc-js' decoder accepts on one server call, before
 * it buffers the message: a peer that has not authenticated may send only a small handshake.
 * grpc-js has no per-call option for this, so this reaches its decoder (1.14); `onTooLarge`
 * hears of a refused message. Returns false if the decoder is not where it is expected (then
 * the link's own check after the frame arrived still applies).
 */
export function setCallReceiveLimit(
  call: grpc.ServerDuplexStream<Buffer, Buffer>,
  bytes: number,
  onTooLarge?: (error: Error) => void,
): boolean {
  const inner = (call as unknown as { call?: { decoder?: Decoder } }).call;
  const decoder = inner?.decoder;
  if (decoder === undefined || typeof decoder.maxReadMessageLength !== 'number') return false;
  decoder.maxReadMessageLength = bytes;
  if (onTooLarge !== undefined) {
    if (decoder.onTooLarge === undefined) {
      const write = decoder.write.bind(decoder);
      decoder.write = (data: Buffer): Buffer[] => {
        try {
          return write(data);
        } catch (err) {
          // Reported once: the decoder keeps throwing on the rest of the refused message.
          const report = decoder.onTooLarge;
          decoder.onTooLarge = () => undefined;
          report?.(err as Error);
          throw err;
        }
      };
    }
    decoder.onTooLarge = onTooLarge;
  }
  return true;
}

/**
 * Raises the HTTP/2 receive windows of an accepted call's connection (the stream's and the
 * connection's) to `bytes`, once its peer authenticated: before that, HTTP/2's default small
 * window holds what an unknown peer can push. grpc-js has no server option for it, so this
 * reaches its HTTP/2 stream (1.14). Returns false if the stream is not where it is expected
 * (the link then works with the default window, only slower for large messages).
 */
export function setCallWindow(
  call: grpc.ServerDuplexStream<Buffer, Buffer>,
  bytes: number,
): boolean {
  const inner = (call as unknown as { call?: { stream?: { session?: Http2Session } } }).call;
  const session = inner?.stream?.session;
  if (session === undefined || typeof session.setLocalWindowSize !== 'function') return false;
  try {
    session.settings({ initialWindowSize: bytes });
    session.setLocalWindowSize(bytes);
    return true;
  } catch {
    return false; // a session closing meanwhile: the link ends anyway
  }
}

/**
 * Resets a server call's HTTP/2 stream (RST_STREAM CANCEL) unless it is closed already: after
 * our status grpc-js still takes in what the peer sends on its half, and a hostile peer can
 * keep sending. Reaches into grpc-js' call as `setCallWindow` does; false where it cannot.
 */
export function resetCall(call: grpc.ServerDuplexStream<Buffer, Buffer>): boolean {
  const inner = (call as unknown as { call?: { stream?: Http2Stream } }).call;
  const stream = inner?.stream;
  if (stream === undefined || typeof stream.close !== 'function') return false;
  if (stream.closed || stream.destroyed) return true;
  try {
    stream.close(NGHTTP2_CANCEL);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes grpc-js take an accepted call's messages as uncompressed, whatever its `grpc-encoding`
 * header says, and returns what that header said when it was not `identity` (the acceptor then
 * refuses the call). Links never compress, and grpc-js inflates a compressed message up to the
 * server's whole frame limit before the acceptor sees it, even before the handshake: 1 KiB of
 * gzip per message held 1 MiB (a peer with 512 streams grew a node by 440 MiB). Reaches into
 * grpc-js' call (1.14) as `setCallWindow` does; undefined where it cannot.
 */
export function refuseCompression(
  call: grpc.ServerDuplexStream<Buffer, Buffer>,
): string | undefined {
  const inner = (call as unknown as { call?: { incomingEncoding?: unknown } }).call;
  const encoding = inner?.incomingEncoding;
  if (typeof encoding !== 'string' || encoding === 'identity') return undefined;
  inner!.incomingEncoding = 'identity';
  return encoding;
}

/** HTTP/2's CANCEL error code (RFC 9113 §7). */
const NGHTTP2_CANCEL = 0x8;

interface Http2Stream {
  readonly closed: boolean;
  readonly destroyed: boolean;
  close(code: number): void;
}

interface Http2Session {
  settings(settings: { initialWindowSize: number }): void;
  setLocalWindowSize(bytes: number): void;
}

interface Decoder {
  maxReadMessageLength: number;
  write(data: Buffer): Buffer[];
  onTooLarge?: (error: Error) => void;
}
