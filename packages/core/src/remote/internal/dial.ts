import * as grpc from '@grpc/grpc-js';
import { EndpointUnavailableError, type HandshakeError } from '../../errors';
import { ClientHandshake } from './client-handshake';
import { clientReceiveFastPath, clientSendFastPath } from './grpc-fast-path';
import type { RemoteLogger } from './logger';
import { StreamLink, type LinkConfig, type StreamLinkHandlers } from './stream-link';
import { CONNECT_METHOD, encodeFrame } from './wire';

const identity = (bytes: Buffer): Buffer => bytes;

/** What dialling a peer needs from the node. */
export interface DialHost {
  readonly clusterName: string;
  readonly memberId: string;
  readonly address: string;
  readonly secret: string | undefined;
  readonly credentials: grpc.ChannelCredentials;
  readonly channelOptions: grpc.ChannelOptions;
  readonly connectTimeoutMs: number;
  readonly linkConfig: LinkConfig;
  readonly logger: RemoteLogger;
  /** Frames that arrive after the handshake (batches, goodbye). */
  readonly linkHandlers: StreamLinkHandlers;
  /** A peer refused our handshake (counted and logged, throttled). */
  handshakeRefused(address: string, error: HandshakeError): void;
}

/** How a dial ends: `open` with the authenticated link, or `failed`. */
export interface DialCallbacks {
  open(link: StreamLink): void;
  failed(error: EndpointUnavailableError): void;
  /** The link ended after it was open. */
  closed(link: StreamLink, error?: Error): void;
}

/** An attempt in progress; `cancel` abandons it (no callback runs after). */
export interface Dial {
  readonly client: grpc.Client | undefined;
  cancel(): void;
}

/**
 * Opens a Connect stream to `address` and runs the client handshake on it (ClientHandshake):
 * `open` once the server accepted and proved itself, `failed` on a refusal, an error or
 * `connectTimeoutMs` without an answer.
 */
export function dial(address: string, host: DialHost, on: DialCallbacks): Dial {
  let client: grpc.Client;
  let stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  let sendFast = false;
  try {
    client = new grpc.Client(address, host.credentials, host.channelOptions);
    sendFast = clientSendFastPath(client);
    stream = client.makeBidiStreamRequest(CONNECT_METHOD, identity, identity);
  } catch (err) {
    // An address grpc cannot even parse: unreachable like any other, never a throw into send().
    const message = `cannot connect to ${address}: ${(err as Error).message}`;
    queueMicrotask(() => on.failed(new EndpointUnavailableError(address, message, { cause: err })));
    return { client: undefined, cancel: () => undefined };
  }
  const handshake = new ClientHandshake(host, host.secret, address);
  let state: 'handshake' | 'open' | 'over' = 'handshake';
  const fail = (error: EndpointUnavailableError): void => {
    if (state !== 'handshake') return;
    state = 'over';
    clearTimeout(timer);
    on.failed(error);
  };
  const link = new StreamLink(
    stream,
    'client',
    address,
    {
      onFrame: (l, frame, receivedAt) => {
        if (state === 'open') return host.linkHandlers.onFrame(l, frame, receivedAt);
        if (state === 'over') return;
        const step = handshake.step(frame);
        if (step.kind === 'pending') {
          l.write(encodeFrame(step.reply));
          return;
        }
        if (step.kind === 'refused') {
          host.handshakeRefused(address, step.error);
          // Fail first, so the abort's onClose finds the attempt already over.
          fail(new EndpointUnavailableError(address, step.error.message, { cause: step.error }));
          l.abort(grpc.status.PERMISSION_DENIED, step.error.message);
          return;
        }
        state = 'open';
        clearTimeout(timer);
        l.peerMemberId = step.memberId;
        // Only now is grpc-js' decoder there (the call got its connection).
        l.fastPaths = { send: sendFast, receive: clientReceiveFastPath(stream) };
        l.authenticate();
        on.open(l);
      },
      onClose: (l, error) => {
        if (state === 'open') {
          host.linkHandlers.onClose(l, error);
          on.closed(l, error);
          return;
        }
        const why = error?.message ?? 'stream ended';
        fail(
          new EndpointUnavailableError(address, `cannot connect to ${address}: ${why}`, {
            cause: error,
          }),
        );
      },
      onCorruptFrame: (l, error) => host.linkHandlers.onCorruptFrame(l, error),
      onViolation: (l, error) => host.linkHandlers.onViolation?.(l, error),
    },
    host.linkConfig,
  );
  link.write(encodeFrame({ handshake: handshake.hello }));
  const timer = setTimeout(() => {
    fail(
      new EndpointUnavailableError(
        address,
        `connecting to ${address} took over ${host.connectTimeoutMs} ms (connectTimeoutMs)`,
      ),
    );
    link.abort(grpc.status.DEADLINE_EXCEEDED, 'handshake timed out');
  }, host.connectTimeoutMs);
  return {
    client,
    cancel: () => {
      if (state === 'handshake') {
        state = 'over';
        clearTimeout(timer);
        link.end();
      }
    },
  };
}
