/** Returned by subscribe; `unsubscribe()` is idempotent. */
export interface Subscription {
  unsubscribe(): void;
}

type Class<T> = abstract new (...args: never[]) => T;

interface Subscriber {
  matches: (event: unknown) => boolean;
  handler: (event: unknown) => void;
}

function isClass(fn: unknown): fn is Class<unknown> {
  // Arrow functions have no prototype; classes (and native constructors like Error) do.
  return typeof fn === 'function' && fn.prototype !== undefined;
}

/**
 * In-process publish/subscribe for system events (dead letters, supervision) and user events.
 * Subscribe by class (`instanceof`) or by an arrow-function predicate. A handler that throws
 * is reported through `onError` and does not stop the others.
 *
 * @example
 * const sub = system.eventStream.subscribe(DeadLetterEvent, (e) => metrics.inc(e.reason));
 * sub.unsubscribe();
 */
export class EventStream {
  private subscribers: Subscriber[] = [];

  constructor(private readonly onError: (error: unknown) => void = () => {}) {}

  /** Handles every published event that is an instance of `type` (or passes the predicate). */
  subscribe<T>(type: Class<T>, handler: (event: T) => void): Subscription;
  subscribe(
    predicate: (event: unknown) => boolean,
    handler: (event: unknown) => void,
  ): Subscription;
  subscribe(
    typeOrPredicate: Class<unknown> | ((event: unknown) => boolean),
    handler: (event: never) => void,
  ): Subscription {
    const matches = isClass(typeOrPredicate)
      ? (event: unknown) => event instanceof typeOrPredicate
      : (typeOrPredicate as (event: unknown) => boolean);
    const subscriber: Subscriber = { matches, handler: handler as (event: unknown) => void };
    // Copy on write: publishing iterates a snapshot, so handlers may (un)subscribe.
    this.subscribers = [...this.subscribers, subscriber];
    return {
      unsubscribe: () => {
        this.subscribers = this.subscribers.filter((s) => s !== subscriber);
      },
    };
  }

  /** Delivers `event` synchronously to every matching subscriber. */
  publish(event: unknown): void {
    for (const s of this.subscribers) {
      try {
        if (s.matches(event)) s.handler(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Number of subscriptions (for tests and metrics). */
  get size(): number {
    return this.subscribers.length;
  }
}
