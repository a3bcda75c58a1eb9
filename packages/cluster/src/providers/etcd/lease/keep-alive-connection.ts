import * as grpc from '@grpc/grpc-js';
import { slotIndex, type KeepRequest } from './lease-protocol';
import {
  AUTHENTICATE,
  LEASE_KEEP_ALIVE,
  LEASE_REVOKE,
  decodeAuthToken,
  decodeKeepAlive,
  encodeAuthenticate,
  encodeLeaseId,
  type KeepAliveReply,
} from './lease-wire';

/** Pause after a reset that came right after the last one, growing to the cap. */
const RESET_BACKOFF_INITIAL_MS = 50;
/** Cap of that pause: all endpoints failing in a row costs at most this between attempts. */
const RESET_BACKOFF_MAX_MS = 500;
/**
 * While nothing has been answered for a whole attempt timeout, a keep-alive still unanswered after
 * attemptTimeoutMs / HEDGE_DIVISOR moves to a fresh stream on the next endpoint. Why fresh: etcd
 * serves a stream's keep-alives one at a time, and a member that takes one during a leader
 * election forwards it only after an extra election timeout (it waits that long for a leader to
 * appear), so a keep-alive sent before the new leader is known comes back about 1 s after the
 * election. A keep-alive that reaches a member once the leader is known is answered at once.
 */
const HEDGE_DIVISOR = 4;
/** Deadline of a revoke or an authentication from the lease thread. */
const UNARY_TIMEOUT_MS = 1000;
/**
 * Reconnect backoff of the thread's gRPC channels (grpc-js defaults to 1 s growing to 120 s, far
 * too slow for a lease of a few seconds).
 */
const CHANNEL_OPTIONS = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 500,
};

/** One lease kept alive on a connection. */
interface Kept {
  request: KeepRequest;
  validUntil: number;
}

/**
 * One LeaseKeepAlive stream and the send times (main clock) of its keep-alives not answered yet,
 * per lease, oldest first (etcd answers a stream's keep-alives in order).
 */
interface Line {
  stream: grpc.ClientDuplexStream<Buffer, KeepAliveReply>;
  sent: Map<string, number[]>;
}

/** What the connection needs from the thread around it. */
export interface ConnectionHost {
  /** The main thread's clock, read from this thread. */
  mainNow(): number;
  /** The shared array (heartbeat and trusted-until times). */
  shared: Float64Array;
  lost(request: KeepRequest, cause: string): void;
  log(level: 'debug' | 'warn', msg: string, fields: Record<string, unknown>): void;
}

/**
 * The leases of one etcd endpoint set kept alive over one long-lived LeaseKeepAlive stream.
 * Every `intervalMs` each lease gets a keep-alive; a reply makes it trusted until its send time +
 * trustMs (etcd restarts the TTL when it receives the keep-alive, which is later). The stream
 * moves to the next endpoint at once when it fails, and when a keep-alive stays unanswered for
 * attemptTimeoutMs (a hung or partitioned member), then sends every lease's keep-alive again.
 * A stream left for being slow is not cancelled at once: it drains for one trust window, and a
 * late answer on it still counts (an etcd starved of CPU answers seconds late; dropping its
 * answers would fence members whose leases it keeps renewing).
 * A lease whose main loop is late by more than maxLoopStallMs is no longer kept: its
 * trusted-until time goes to 0 first, then it is revoked (its claims go with it at once, so
 * survivors need not wait for the TTL).
 */
export class KeepAliveConnection {
  private readonly kept = new Map<string, Kept>();
  private readonly clients = new Map<string, grpc.Client>();
  private line: Line | undefined;
  /** Streams left for being slow, still read until their answers can no longer help. */
  private readonly draining = new Set<Line>();
  private opening = false;
  private index = 0;
  private timer: NodeJS.Timeout | undefined;
  private intervalMs = 0;
  private lastResetAt = -Infinity;
  private resetDelay = RESET_BACKOFF_INITIAL_MS;
  private token: string | undefined;
  private closed = false;
  /** When (main clock) the last answer arrived on any stream; the start counts as one. */
  private lastAnswerAt: number;

  constructor(
    private readonly template: KeepRequest,
    private readonly host: ConnectionHost,
  ) {
    this.index = Math.floor(Math.random() * template.endpoints.length);
    this.lastAnswerAt = host.mainNow();
  }

  /** Number of leases kept on this connection. */
  get size(): number {
    return this.kept.size;
  }

  /** Starts keeping a lease alive (its first keep-alive goes out at once). */
  add(request: KeepRequest): void {
    const validUntil = this.host.shared[slotIndex(request.slot)];
    this.kept.set(request.lease, { request, validUntil });
    this.retime();
    this.sendOne(this.kept.get(request.lease)!);
  }

  /** Stops keeping the lease of `slot` (its trusted-until time is left to the caller). */
  remove(slot: number): void {
    for (const [id, k] of this.kept) {
      if (k.request.slot !== slot) continue;
      this.kept.delete(id);
      this.line?.sent.delete(id);
      for (const l of this.draining) l.sent.delete(id);
    }
    this.retime();
  }

  /** Closes the stream and every channel. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.line?.stream.cancel();
    this.line = undefined;
    for (const l of this.draining) l.stream.cancel();
    this.draining.clear();
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private retime(): void {
    const interval = Math.min(...[...this.kept.values()].map((k) => k.request.intervalMs));
    if (interval === this.intervalMs) return;
    clearInterval(this.timer);
    this.intervalMs = interval;
    if (Number.isFinite(interval)) this.timer = setInterval(() => this.tick(), interval);
  }

  private tick(): void {
    const now = this.host.mainNow();
    const stalled = now - this.host.shared[0];
    for (const k of [...this.kept.values()]) {
      if (stalled > k.request.maxLoopStallMs) this.fence(k, stalled);
    }
    for (const k of this.kept.values()) this.sendOne(k);
  }

  private sendOne(k: Kept): void {
    const line = this.ensureStream();
    if (!line) return;
    const id = k.request.lease;
    let sent = line.sent.get(id);
    if (!sent) line.sent.set(id, (sent = []));
    const at = this.host.mainNow();
    sent.push(at);
    line.stream.write(encodeLeaseId(id));
    // Checked on its own timers, not at the next tick: a tick found it unanswered one interval
    // late (and, with libuv's whole-ms timers, often a second interval late), so a hung etcd
    // member (SIGSTOP, a silent path) cost 2-3 s of the trust window per endpoint tried.
    this.check(
      line,
      id,
      at,
      k.request.attemptTimeoutMs,
      k.request.attemptTimeoutMs / HEDGE_DIVISOR,
    );
  }

  /**
   * Leaves `line` when the keep-alive sent on it at `at` is still unanswered after `timeoutMs`,
   * or after `hedgeMs` once no answer at all has arrived for `timeoutMs` (etcd is in trouble, an
   * election most likely: see HEDGE_DIVISOR). A merely slow etcd whose answers keep coming late
   * gets the whole timeout, and no more streams than one per keep-alive.
   */
  private check(line: Line, id: string, at: number, timeoutMs: number, hedgeMs: number): void {
    const now = this.host.mainNow();
    const due = Math.max(at + hedgeMs, Math.min(at + timeoutMs, this.lastAnswerAt + timeoutMs));
    if (now < due) {
      setTimeout(() => {
        if (this.closed || this.line !== line || !line.sent.get(id)?.includes(at)) return;
        this.check(line, id, at, timeoutMs, hedgeMs);
      }, due - now);
      return;
    }
    this.reset(
      now - at >= timeoutMs
        ? 'no keep-alive reply within the attempt timeout'
        : 'no keep-alive reply anywhere within the attempt timeout: trying a fresh stream',
      true,
    );
  }

  private onReply(line: Line, reply: KeepAliveReply): void {
    const sentAt = line.sent.get(reply.id)?.shift();
    const k = this.kept.get(reply.id);
    if (!k || sentAt === undefined) return;
    this.lastAnswerAt = this.host.mainNow();
    if (reply.ttl <= 0) {
      this.kept.delete(reply.id);
      this.host.shared[slotIndex(k.request.slot)] = 0;
      this.host.lost(k.request, 'etcd reports the lease expired');
      return;
    }
    k.validUntil = Math.max(k.validUntil, sentAt + k.request.trustMs);
    this.host.shared[slotIndex(k.request.slot)] = k.validUntil;
  }

  /** Main loop too late: untrust first, then revoke, then tell the main thread. */
  private fence(k: Kept, stalledMs: number): void {
    const { request } = k;
    this.kept.delete(request.lease);
    this.host.shared[slotIndex(request.slot)] = 0;
    this.retime();
    const cause = `the main event loop did not answer for ${Math.round(stalledMs)} ms (maxLoopStallMs ${request.maxLoopStallMs})`;
    this.host.log('warn', 'lease fenced: main loop stalled', { lease: request.lease, stalledMs });
    this.host.lost(request, cause);
    const client = this.client();
    client.makeUnaryRequest(
      LEASE_REVOKE,
      (b: Buffer) => b,
      (b: Buffer) => b,
      encodeLeaseId(request.lease),
      this.metadata(),
      { deadline: Date.now() + UNARY_TIMEOUT_MS },
      (err) => {
        if (err) this.host.log('debug', 'revoke after a stall failed', { err: String(err) });
      },
    );
  }

  private ensureStream(): Line | undefined {
    if (this.line || this.closed) return this.line;
    if (this.opening) return undefined;
    if (this.template.auth && this.token === undefined) {
      this.authenticate();
      return undefined;
    }
    const stream = this.client().makeBidiStreamRequest(
      LEASE_KEEP_ALIVE,
      (b: Buffer) => b,
      decodeKeepAlive,
      this.metadata(),
      {},
    );
    const line: Line = { stream, sent: new Map() };
    stream.on('data', (reply: KeepAliveReply) => this.onReply(line, reply));
    const gone = (cause: string): void => {
      this.draining.delete(line);
      if (this.line === line) this.reset(cause, false);
    };
    stream.on('error', (err: Error) => gone(`keep-alive stream failed: ${err.message}`));
    stream.on('end', () => gone('keep-alive stream ended'));
    this.line = line;
    return line;
  }

  /**
   * Leaves the stream (drained for one trust window if it is only slow, else cancelled), moves to
   * the next endpoint and sends every keep-alive again.
   */
  private reset(cause: string, drain: boolean): void {
    const old = this.line;
    this.line = undefined;
    if (old && drain) this.drain(old);
    else old?.stream.cancel();
    // A stream left for being slow says nothing against the token (etcd's tokens hold on every
    // member); a failed one may have failed on it.
    if (!drain) this.token = undefined;
    const endpoint = this.template.endpoints[this.index];
    this.index = (this.index + 1) % this.template.endpoints.length;
    this.host.log('debug', 'etcd keep-alive stream reset', { cause, endpoint });
    const now = Date.now();
    this.resetDelay =
      now - this.lastResetAt < RESET_BACKOFF_MAX_MS
        ? Math.min(this.resetDelay * 2, RESET_BACKOFF_MAX_MS)
        : RESET_BACKOFF_INITIAL_MS;
    // The first failure in a while moves on at once: a dead member is left without waiting. A
    // slow stream is left at once too: its keep-alives already waited their timeout.
    const delay = !drain && now - this.lastResetAt < RESET_BACKOFF_MAX_MS ? this.resetDelay : 0;
    this.lastResetAt = now;
    this.opening = true;
    setTimeout(() => {
      this.opening = false;
      if (this.closed) return;
      for (const k of this.kept.values()) this.sendOne(k);
    }, delay);
  }

  /** Reads a slow stream's late answers until no answer can extend any trust, then cancels it. */
  private drain(line: Line): void {
    this.draining.add(line);
    const trustMs = Math.max(0, ...[...this.kept.values()].map((k) => k.request.trustMs));
    setTimeout(() => {
      if (!this.draining.delete(line)) return;
      line.stream.cancel();
    }, trustMs).unref();
  }

  private authenticate(): void {
    const auth = this.template.auth!;
    this.opening = true;
    this.client().makeUnaryRequest(
      AUTHENTICATE,
      (b: Buffer) => b,
      decodeAuthToken,
      encodeAuthenticate(auth.username, auth.password),
      new grpc.Metadata(),
      { deadline: Date.now() + UNARY_TIMEOUT_MS },
      (err, token) => {
        this.opening = false;
        if (err || token === undefined) {
          this.reset(`etcd authentication failed: ${err?.message ?? 'no token'}`, false);
          return;
        }
        this.token = token;
        for (const k of this.kept.values()) this.sendOne(k);
      },
    );
  }

  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.token) md.set('token', this.token);
    return md;
  }

  private client(): grpc.Client {
    const endpoint = this.template.endpoints[this.index];
    let client = this.clients.get(endpoint);
    if (!client) {
      const secure = endpoint.startsWith('https:') || this.template.credentials !== undefined;
      const creds = secure
        ? grpc.credentials.createSsl(
            this.template.credentials?.rootCertificate,
            this.template.credentials?.privateKey,
            this.template.credentials?.certChain,
          )
        : grpc.credentials.createInsecure();
      client = new grpc.Client(endpoint.replace(/^https?:\/\//, ''), creds, {
        ...CHANNEL_OPTIONS,
        ...this.template.grpcOptions,
      });
      this.clients.set(endpoint, client);
    }
    return client;
  }
}
