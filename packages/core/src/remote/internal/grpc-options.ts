import type * as grpc from '@grpc/grpc-js';
import type { ResolvedRemoteLimits } from '../remote-limits';

/**
 * Keepalive pings on every connection: a peer that vanished without closing (host crash,
 * partition) is noticed within ~30 s, which also frees its address for the `duplicate` check.
 */
const KEEPALIVE_TIME_MS = 20_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;

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
    'grpc.use_local_subchannel_pool': 1,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
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

interface Decoder {
  maxReadMessageLength: number;
  write(data: Buffer): Buffer[];
  onTooLarge?: (error: Error) => void;
}
