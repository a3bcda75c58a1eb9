import type * as grpc from '@grpc/grpc-js';
import { replaceDecoder } from './grpc-decoder';
import { framedInPlace } from './grpc-frames';

/**
 * grpc-js copies every message it sends into a new buffer with the 5-byte gRPC prefix, and
 * joins every message it receives into another new buffer: with 1 MiB messages back to back
 * two MiB of short-lived external memory per message per process, beside the chunks' own
 * (reused) memory. V8 counts external memory towards starting a full garbage collection, and
 * those pauses are what the small calls beside large messages waited for. This reaches into a
 * link's grpc-js call (1.14: private objects) so that a chunk written with room for the prefix
 * is framed in place (grpc-frames) and large incoming messages are joined in reused memory
 * (grpc-decoder). Every step checks the shape it expects and leaves grpc-js' own path in place
 * where it is not found: the link works either way, only with the copies.
 */

/**
 * Channel options the client side's fast path needs. grpc-js keeps up to 1 MiB of a call's
 * messages for retries and completes their writes before they reached HTTP/2; with no such
 * buffer (retries are off for the link anyway) a write completes once HTTP/2 wrote it, so a
 * chunk buffer whose message was framed in place is not reused while HTTP/2 still reads it.
 */
export const FAST_PATH_CHANNEL_OPTIONS = { 'grpc.per_rpc_retry_buffer_size': 0 } as const;

/** Which fast paths a call took. */
export interface FastPaths {
  send: boolean;
  receive: boolean;
}

interface ServerCallInner {
  serializeMessage(value: unknown): Buffer;
  decoder: unknown;
}

/**
 * An accepted Connect call: its messages framed in place where they have room, large ones
 * received into reused memory. Before the first message is read (the decoder is replaced
 * only between messages).
 */
export function serverFastPath(call: grpc.ServerDuplexStream<Buffer, Buffer>): FastPaths {
  const inner = (call as unknown as { call?: Partial<ServerCallInner> }).call;
  if (inner === undefined || inner === null) return { send: false, receive: false };
  let send = false;
  const serialize = inner.serializeMessage;
  if (typeof serialize === 'function') {
    // The Connect method's serializer is the identity: a frame framed in place skips it.
    inner.serializeMessage = (value: unknown): Buffer =>
      framedInPlace(value) ?? serialize.call(inner, value);
    send = true;
  }
  return { send, receive: replaceDecoder(inner.decoder) };
}

interface FilterFactory {
  createFilter(): unknown;
}

interface MessageHandler {
  writeMessage(message: Buffer, compress: boolean): Promise<Buffer>;
}

/**
 * A client's channel, before its call is made: messages framed in place where they have room
 * (grpc-js frames them in its compression filter's handler). Only with
 * FAST_PATH_CHANNEL_OPTIONS in force (see there); false where the channel is not as expected.
 */
export function clientSendFastPath(client: grpc.Client): boolean {
  const internal = (
    client.getChannel() as unknown as {
      internalChannel?: {
        filterStackFactory?: { factories?: unknown };
        retryBufferTracker?: { limitPerCall?: unknown };
      };
    }
  ).internalChannel;
  const factories = internal?.filterStackFactory?.factories;
  if (!Array.isArray(factories) || internal?.retryBufferTracker?.limitPerCall !== 0) return false;
  let patched = false;
  for (const factory of factories as Array<Partial<FilterFactory>>) {
    const create = factory.createFilter;
    if (typeof create !== 'function') continue;
    patched = true;
    factory.createFilter = (): unknown => {
      const filter = create.call(factory) as { sendCompression?: Partial<MessageHandler> };
      const handler = filter?.sendCompression;
      const write = handler?.writeMessage;
      if (handler !== undefined && typeof write === 'function') {
        handler.writeMessage = (message: Buffer, compress: boolean): Promise<Buffer> => {
          const framed = compress ? undefined : framedInPlace(message);
          return framed !== undefined
            ? Promise.resolve(framed)
            : write.call(handler, message, compress);
        };
      }
      return filter;
    };
  }
  return patched;
}

/**
 * A client's call once it is connected (its handshake done): large incoming messages joined in
 * reused memory. grpc-js' decoder sits in the call's one attempt (retries are off).
 */
export function clientReceiveFastPath(stream: grpc.ClientDuplexStream<Buffer, Buffer>): boolean {
  interface Chain {
    call?: {
      call?: { child?: { underlyingCalls?: Array<{ call?: { child?: { decoder?: unknown } } }> } };
    };
  }
  const attempts = (stream as unknown as Chain).call?.call?.child?.underlyingCalls;
  if (!Array.isArray(attempts) || attempts.length !== 1) return false;
  return replaceDecoder(attempts[0]?.call?.child?.decoder);
}
