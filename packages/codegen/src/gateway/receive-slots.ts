import * as grpc from '@grpc/grpc-js';
import { GatewayLimitError } from '../errors';

/**
 * Bounds what gRPC clients can make the gateway hold of requests that have not arrived whole.
 * grpc-js buffers a call's request message as it arrives, up to `maxMessageBytes`, and runs the
 * handler only after the client's end of stream: a client that opened calls, sent most of a
 * large message on each and never the rest was held without end. 200 such calls on one
 * connection grew a gateway from 82 to 691 MiB, for as long as the client liked.
 *
 * So a call reads its request only while it holds one of `max` receive slots (the others wait
 * with their HTTP/2 stream paused, which flow control holds to its window), and a call whose
 * request has not arrived whole within `timeoutMs` of its start is answered RESOURCE_EXHAUSTED
 * with a GatewayLimitError. At most `max` x maxMessageBytes of partial requests are held; a
 * request that arrives in one piece holds its slot for an event-loop turn or two.
 */
export class ReceiveSlots {
  private free: number;
  /** Grants waiting for a slot, in arrival order. */
  private readonly waiting = new Set<() => void>();

  constructor(readonly max: number) {
    this.free = max;
  }

  /** Calls `grant` once a slot is free (at once if one is); the returned function gives it up. */
  acquire(grant: () => void): () => void {
    let held = false;
    const take = (): void => {
      held = true;
      grant();
    };
    if (this.free > 0) {
      this.free--;
      take();
    } else this.waiting.add(take);
    return () => {
      if (!held) return void this.waiting.delete(take);
      held = false;
      const next = this.waiting.values().next();
      if (next.done) this.free++;
      else {
        this.waiting.delete(next.value);
        next.value();
      }
    };
  }
}

/** How a call of the interceptor reads its request. */
interface ReceiveBounds {
  readonly slots: ReceiveSlots;
  readonly timeoutMs: number;
  readonly refuse: (err: GatewayLimitError) => grpc.StatusObject;
  /** What the connection of `peer` hears of its calls. */
  readonly calls: CallHooks;
}

/** Hooks of the receive-slots interceptor: a call opened, a call's request arrived whole. */
export interface CallHooks {
  opened(peer: string): void;
  whole(peer: string): void;
}

/**
 * One call: its first read waits for a slot and starts the receive timer; its end of stream
 * (or its end) gives the slot back.
 */
class ReceivingCall extends grpc.ServerInterceptingCall {
  private state: 'new' | 'receiving' | 'received' = 'new';
  private release: (() => void) | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;

  constructor(
    call: grpc.ServerInterceptingCallInterface,
    private readonly path: string,
    private readonly bounds: ReceiveBounds,
  ) {
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveHalfClose((next) => {
        this.received();
        bounds.calls.whole(call.getPeer());
        next();
      })
      .withOnCancel(() => this.received())
      .build();
    super(call, new grpc.ResponderBuilder().withStart((next) => next(listener)).build());
    bounds.calls.opened(call.getPeer());
  }

  override startRead(): void {
    // Reads after the request (its end of stream) and while receiving pass through.
    if (this.state !== 'new') return super.startRead();
    this.state = 'receiving';
    this.timer = setTimeout(() => this.timedOut(), this.bounds.timeoutMs);
    // A slot free now is granted inside acquire, before `release` is set: read after it.
    let now = false;
    this.release = this.bounds.slots.acquire(() =>
      this.release === undefined ? (now = true) : super.startRead(),
    );
    if (now) super.startRead();
  }

  private received(): void {
    if (this.state === 'received') return;
    this.state = 'received';
    clearTimeout(this.timer);
    this.release?.();
  }

  private timedOut(): void {
    if (this.state === 'received') return;
    this.received();
    const { timeoutMs } = this.bounds;
    const err = new GatewayLimitError(
      'receiveTimeoutMs',
      `the request of ${this.path} did not arrive whole within ${timeoutMs} ms`,
    );
    this.sendStatus(this.bounds.refuse(err));
  }
}

/**
 * A grpc-js server interceptor that makes every call read its request (from its first read to
 * the client's end of stream) inside a slot of `slots`, within `timeoutMs` of its start.
 * `refuse` turns the limit's error into the status the client gets; `calls` hears of each call
 * opened, and of each whose request arrived whole (its connection is then a client's).
 */
export function receiveSlotsInterceptor(
  slots: ReceiveSlots,
  timeoutMs: number,
  refuse: (err: GatewayLimitError) => grpc.StatusObject,
  calls: CallHooks,
): grpc.ServerInterceptor {
  const bounds: ReceiveBounds = { slots, timeoutMs, refuse, calls };
  return (method, call) => new ReceivingCall(call, method.path, bounds);
}
