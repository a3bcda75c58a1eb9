import * as grpc from '@grpc/grpc-js';
import type { Clock } from '../clock';
import { EndpointUnavailableError, type HandshakeError } from '../errors';
import { BatchBuilder } from './internal/batch-builder';
import { ClientHandshake } from './internal/client-handshake';
import type { RemoteLogger } from './internal/logger';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import type { StreamLinkHandlers } from './internal/stream-link';
import { StreamLink } from './internal/stream-link';
import { CONNECT_METHOD, encodeFrame } from './internal/wire';

/** Frames above this many payload bytes are sent at once, so one frame stays a few MiB at most. */
const MAX_BATCH_BYTES = 1024 * 1024;

/** grpc-js limits a message to 4 MB by default; our frames are bounded by MAX_BATCH_BYTES + one message instead. */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
  'grpc.enable_retries': 0,
};

const identity = (bytes: Buffer): Buffer => bytes;

/** Everything an endpoint needs from the node that owns it. */
export interface EndpointHost {
  /** What this node states in its handshakes. */
  readonly clusterName: string;
  readonly memberId: string;
  readonly address: string;
  /** The shared secret this node proves (and asks peers to prove). */
  readonly secret: string | undefined;
  readonly credentials: grpc.ChannelCredentials;
  readonly channelOptions: grpc.ChannelOptions;
  readonly batchSize: number;
  readonly connectTimeoutMs: number;
  readonly reconnect: { initialDelayMs: number; maxDelayMs: number };
  readonly logger: RemoteLogger;
  /** The system's clock (deadlines on the wire, arrival stamps). */
  readonly clock: Clock;
  /** Frames that arrive after the handshake (batches, goodbye). */
  readonly linkHandlers: StreamLinkHandlers;
  /** An envelope that will never be sent; the host dead-letters it or fails its request. */
  reject(address: string, env: OutboundEnvelope, error: Error): void;
  up(address: string): void;
  /** The peer went away or could not be reached: watchers and pending requests must learn it. */
  down(address: string, error: Error): void;
}

type State = 'idle' | 'connecting' | 'connected' | 'down' | 'closed';

/**
 * The sending side towards one peer address: a state machine around one stream.
 *
 * ```
 *  idle ──send──▶ connecting ──ack──▶ connected ──stream ends──▶ down
 *                    │ fails / refused                 ▲  │ backoff timer
 *                    └────────────────▶ down ◀─────────┘  └──▶ connecting
 *  idle | down ──peer dialled us──▶ connected         any ──close()──▶ closed
 * ```
 *
 * While `connecting`, envelopes wait; while `down`, they are rejected at once with
 * EndpointUnavailableError, so a request to a dead node fails fast instead of timing out.
 */
export class Endpoint {
  private state: State = 'idle';
  private link: StreamLink | undefined;
  private client: grpc.Client | undefined;
  private pending: OutboundEnvelope[] = [];
  private readonly batch: BatchBuilder;
  private flushScheduled = false;
  private attempts = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastError: Error | undefined;

  constructor(
    readonly address: string,
    private readonly host: EndpointHost,
  ) {
    this.batch = new BatchBuilder(host.clock);
  }

  /** True while a stream to the peer is open. */
  get isConnected(): boolean {
    return this.state === 'connected';
  }

  /** True while the peer is known to be unreachable (between reconnect attempts). */
  get isDown(): boolean {
    return this.state === 'down' || this.state === 'closed';
  }

  send(env: OutboundEnvelope): void {
    switch (this.state) {
      case 'connected':
        this.batch.add(env);
        if (this.batch.count >= this.host.batchSize || this.batch.bytes >= MAX_BATCH_BYTES)
          this.flush();
        else if (this.batch.count === 1) this.scheduleFlush();
        return;
      case 'idle':
        this.pending.push(env);
        this.connect();
        return;
      case 'connecting':
        this.pending.push(env);
        return;
      default:
        this.host.reject(this.address, env, this.unavailable());
    }
  }

  /** Adopts a stream the peer opened to us, unless we already have (or are opening) our own. */
  attach(link: StreamLink): boolean {
    if (this.state !== 'idle' && this.state !== 'down') return false;
    this.clearTimer();
    this.becomeConnected(link);
    return true;
  }

  /** A link ended; if it was ours the peer is gone. */
  linkClosed(link: StreamLink, error?: Error): void {
    if (link !== this.link || this.state !== 'connected') return;
    this.link = undefined;
    this.goDown(
      new EndpointUnavailableError(this.address, `connection to ${this.address} was lost`, {
        cause: error,
      }),
    );
  }

  /** Handles the frames waiting on this endpoint's own link now (the peer said goodbye). */
  drainLink(): void {
    this.link?.drain();
  }

  /** The peer said goodbye (graceful shutdown): treat it as gone at once. */
  peerLeft(): void {
    if (this.state === 'closed') return;
    const link = this.link;
    this.link = undefined;
    if (this.state === 'connected' || this.state === 'connecting') {
      this.goDown(
        new EndpointUnavailableError(this.address, `node ${this.address} shut down`, {
          peerLeft: true,
        }),
      );
    }
    link?.end();
  }

  /** Flushes what is queued, says goodbye and ends the stream; later sends are rejected. */
  close(goodbye: Buffer): void {
    if (this.state === 'closed') return;
    if (this.state === 'connected' && this.link) {
      this.flush();
      this.link.write(goodbye);
      this.link.end();
    }
    this.state = 'closed';
    this.lastError = new EndpointUnavailableError(
      this.address,
      `remote is shut down; ${this.address} is unreachable`,
    );
    this.clearTimer();
    this.rejectPending(this.lastError);
    this.client?.close();
    this.client = undefined;
  }

  private connect(): void {
    this.state = 'connecting';
    let client: grpc.Client;
    let stream: grpc.ClientDuplexStream<Buffer, Buffer>;
    try {
      client = new grpc.Client(this.address, this.host.credentials, this.host.channelOptions);
      stream = client.makeBidiStreamRequest(CONNECT_METHOD, identity, identity);
    } catch (err) {
      // An address grpc cannot even parse: unreachable like any other, never a throw into send().
      const message = `cannot connect to ${this.address}: ${(err as Error).message}`;
      return this.connectFailed(
        new EndpointUnavailableError(this.address, message, { cause: err }),
      );
    }
    this.client = client;
    const handshake = new ClientHandshake(this.host, this.host.secret, this.address);
    let open = false;
    const link = new StreamLink(
      stream,
      'client',
      this.address,
      {
        onFrame: (l, frame, receivedAt) => {
          if (open) return this.host.linkHandlers.onFrame(l, frame, receivedAt);
          // An attempt overtaken by close(), a goodbye or a timeout: not ours to adopt any more.
          if (this.client !== client || this.state !== 'connecting') return l.end();
          const step = handshake.step(frame);
          if (step.kind === 'pending') {
            l.write(encodeFrame(step.reply));
            return;
          }
          this.clearTimer();
          if (step.kind === 'refused') return this.refused(l, step.error);
          open = true;
          l.peerMemberId = step.memberId;
          this.becomeConnected(l);
        },
        onClose: (l, error) => {
          if (open) {
            this.host.linkHandlers.onClose(l, error);
            this.linkClosed(l, error);
          } else if (this.client === client && this.state === 'connecting') {
            this.connectFailed(
              new EndpointUnavailableError(
                this.address,
                `cannot connect to ${this.address}: ${error?.message ?? 'stream ended'}`,
                { cause: error },
              ),
            );
          }
        },
        onCorruptFrame: (l, error) => this.host.linkHandlers.onCorruptFrame(l, error),
      },
      this.host.clock,
    );
    link.write(encodeFrame({ handshake: handshake.hello }));
    this.timer = setTimeout(() => {
      if (this.client !== client || this.state !== 'connecting') return;
      // Fail first, so the abort's onClose finds the attempt already over (one down, not two).
      this.connectFailed(
        new EndpointUnavailableError(
          this.address,
          `connecting to ${this.address} took over ${this.host.connectTimeoutMs} ms (connectTimeoutMs)`,
        ),
      );
      link.abort(grpc.status.DEADLINE_EXCEEDED, 'handshake timed out');
    }, this.host.connectTimeoutMs);
  }

  private refused(link: StreamLink, error: HandshakeError): void {
    this.host.logger.error(
      { peer: this.address, refusal: error.refusal, reason: error.message },
      'remote handshake refused by peer',
    );
    // Fail first, so the abort's onClose finds the attempt already over (one down, not two).
    this.connectFailed(new EndpointUnavailableError(this.address, error.message, { cause: error }));
    link.abort(grpc.status.PERMISSION_DENIED, error.message);
  }

  private becomeConnected(link: StreamLink): void {
    this.state = 'connected';
    this.link = link;
    this.attempts = 0;
    this.lastError = undefined;
    const pending = this.pending;
    this.pending = [];
    this.host.up(this.address);
    for (const env of pending) this.send(env);
    this.flush();
  }

  private connectFailed(error: Error): void {
    // The first failure is news; the retries of a peer that stays away are not (debug).
    const log = this.attempts === 0 ? this.host.logger.warn : this.host.logger.debug;
    log.call(
      this.host.logger,
      { peer: this.address, err: error.message, attempt: this.attempts + 1 },
      'remote endpoint unreachable',
    );
    this.goDown(error);
  }

  private goDown(error: Error): void {
    this.state = 'down';
    this.lastError = error;
    this.clearTimer();
    this.client?.close();
    this.client = undefined;
    this.pending.push(...this.batch.discard());
    this.rejectPending(error);
    this.host.down(this.address, error);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const { initialDelayMs, maxDelayMs } = this.host.reconnect;
    const delay = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(this.attempts, 30));
    this.attempts++;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'down') this.connect();
    }, delay);
    this.timer.unref();
  }

  private rejectPending(error: Error): void {
    const pending = this.pending;
    this.pending = [];
    for (const env of pending) this.host.reject(this.address, env, error);
  }

  private unavailable(): EndpointUnavailableError {
    const cause = this.lastError;
    if (cause instanceof EndpointUnavailableError) return cause;
    return new EndpointUnavailableError(this.address, `endpoint ${this.address} is unavailable`, {
      cause,
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After this event-loop turn: no fixed delay, yet everything sent in the turn shares a frame.
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.state === 'connected') this.flush();
    });
  }

  private flush(): void {
    if (this.batch.count === 0 || !this.link) return;
    this.link.write(this.batch.take());
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
