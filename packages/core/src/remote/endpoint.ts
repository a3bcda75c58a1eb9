import type * as grpc from '@grpc/grpc-js';
import { EndpointUnavailableError } from '../errors';
import { dial, type Dial, type DialHost } from './internal/dial';
import type { LinkSender } from './internal/link-sender';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import { PeerSilence } from './internal/peer-silence';
import type { StreamLink } from './internal/stream-link';

/** Everything an endpoint needs from the node that owns it. */
export interface EndpointHost extends DialHost {
  readonly reconnect: { initialDelayMs: number; maxDelayMs: number };
  /** The sender of a link (made on first use). */
  senderOf(link: StreamLink): LinkSender;
  /** An envelope that will never be sent; the host dead-letters it or fails its request. */
  reject(address: string, env: OutboundEnvelope, error: Error): void;
  up(address: string): void;
  /** The peer went away or could not be reached: watchers and pending requests must learn it. */
  down(address: string, error: Error): void;
  /** A connect attempt failed (counted; logged once per kind and interval). */
  unreachable(address: string, error: Error, attempt: number): void;
}

type State = 'idle' | 'connecting' | 'connected' | 'down' | 'closed';

/**
 * The sending side towards one peer address: a state machine around one link.
 *
 * ```
 *  idle ──send──▶ connecting ──handshake done──▶ connected ──link ends──▶ down (dialled)
 *                    │ fails / refused                  ▲  │              │ backoff timer
 *                    └─────────────────▶ down ◀─────────┘  │              └──▶ connecting
 *  idle | down ──peer dialled us──▶ connected ──link ends──┴──▶ idle (never dialled)
 *  any ──close()──▶ closed
 * ```
 *
 * While `connecting`, envelopes wait; while `down`, they are rejected at once with
 * EndpointUnavailableError, so a request to a dead node fails fast instead of timing out. Only
 * an endpoint this node dialled reconnects by itself: a peer that dialled us and left is not
 * dialled back until something here sends to it (a peer cannot make this node dial an address
 * it names). The manager removes an endpoint that stays down past endpointDownTtlMs.
 */
export class Endpoint {
  /** The remote's process for this address (cached here, removed with the endpoint). */
  process: unknown = undefined;
  /** Date.now() when it went down or idle after a link (for removal); 0 while in use. */
  downSince = 0;
  private state: State = 'idle';
  private link: StreamLink | undefined;
  private sender: LinkSender | undefined;
  private attempt: Dial | undefined;
  private pending: OutboundEnvelope[] = [];
  /** This node dialled the peer at least once: it keeps trying after a loss. */
  private dialled = false;
  private attempts = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastError: Error | undefined;

  constructor(
    readonly address: string,
    private readonly host: EndpointHost,
    /** Whether the peer reads what its link carries (see PeerSilence); shared with callers. */
    readonly silence = new PeerSilence(),
  ) {}

  /** True while a link to the peer is open. */
  get isConnected(): boolean {
    return this.state === 'connected';
  }

  /** True while a link is open or being opened: sending to it dials nothing new. */
  get isLive(): boolean {
    return this.state === 'connected' || this.state === 'connecting';
  }

  /** True while the peer is known to be unreachable (between reconnect attempts). */
  get isDown(): boolean {
    return this.state === 'down' || this.state === 'closed';
  }

  /** The client of the current attempt (tests look at its channel). */
  get client(): grpc.Client | undefined {
    return this.attempt?.client;
  }

  send(env: OutboundEnvelope): void {
    switch (this.state) {
      case 'connected':
        this.sender!.send(env);
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

  /** Adopts a link the peer opened to us, unless we already have (or are opening) our own. */
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
    this.sender = undefined;
    // A typed reason (a peer not reading, a limit) is worth naming to the callers.
    const why = error && 'code' in error ? `: ${error.message}` : '';
    this.goDown(
      new EndpointUnavailableError(this.address, `connection to ${this.address} was lost${why}`, {
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
    const sender = this.sender;
    this.sender = undefined;
    if (this.state === 'connected' || this.state === 'connecting') {
      const error = new EndpointUnavailableError(this.address, `node ${this.address} shut down`, {
        peerLeft: true,
      });
      sender?.close(error);
      this.goDown(error);
    }
    link?.end();
  }

  /** Flushes what is queued, says goodbye and ends the link; later sends are rejected. */
  close(goodbye: Buffer | undefined): void {
    if (this.state === 'closed') return;
    if (this.state === 'connected' && this.link) {
      this.sender!.flushAll();
      if (goodbye) this.link.write(goodbye);
      this.link.end();
    }
    this.state = 'closed';
    this.silence.since = 0;
    this.lastError = new EndpointUnavailableError(
      this.address,
      `remote is shut down; ${this.address} is unreachable`,
    );
    this.clearTimer();
    this.rejectPending(this.lastError);
    this.attempt?.cancel();
    this.attempt?.client?.close();
    this.attempt = undefined;
  }

  private connect(): void {
    this.state = 'connecting';
    this.dialled = true;
    this.downSince = 0;
    const attempt: Dial = dial(this.address, this.host, {
      open: (link) => {
        if (this.attempt !== attempt) return link.end();
        this.becomeConnected(link);
      },
      failed: (error) => {
        if (this.attempt !== attempt || this.state !== 'connecting') return;
        this.connectFailed(error);
      },
      closed: (link, error) => this.linkClosed(link, error),
    });
    this.attempt = attempt;
  }

  private becomeConnected(link: StreamLink): void {
    this.state = 'connected';
    this.link = link;
    this.silence.since = 0;
    link.silence = this.silence;
    this.sender = this.host.senderOf(link);
    this.attempts = 0;
    this.lastError = undefined;
    this.downSince = 0;
    const pending = this.pending;
    this.pending = [];
    this.host.up(this.address);
    for (const env of pending) this.sender.send(env);
    this.sender.flush();
  }

  private connectFailed(error: Error): void {
    this.host.unreachable(this.address, error, this.attempts + 1);
    this.goDown(error);
  }

  private goDown(error: Error): void {
    // The link is gone: callers now learn the peer's state from the endpoint (down, dialling).
    this.silence.since = 0;
    this.lastError = error;
    this.downSince = Date.now();
    this.clearTimer();
    this.attempt?.client?.close();
    this.attempt = undefined;
    this.rejectPending(error);
    if (this.dialled) {
      this.state = 'down';
      this.host.down(this.address, error);
      this.scheduleReconnect();
    } else {
      // The peer dialled us and left: nothing here wants it, so nothing dials it back.
      this.state = 'idle';
      this.host.down(this.address, error);
    }
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

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
