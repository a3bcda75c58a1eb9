import { Listeners } from './listeners';

/** A tiny typed event emitter: one Listeners set per event name. */
export class TypedEvents<E extends object> {
  private readonly byName = new Map<keyof E, Listeners<unknown>>();

  constructor(private readonly onError: (err: unknown) => void) {}

  /** Subscribes; the returned function unsubscribes. */
  on<K extends keyof E>(event: K, listener: (payload: E[K]) => void): () => void {
    let set = this.byName.get(event);
    if (!set) {
      set = new Listeners<unknown>(this.onError);
      this.byName.set(event, set);
    }
    return set.add(listener as (payload: unknown) => void);
  }

  /** Calls the listeners of `event`. */
  emit<K extends keyof E>(event: K, payload: E[K]): void {
    this.byName.get(event)?.emit(payload);
  }

  /** Removes every listener. */
  clear(): void {
    this.byName.clear();
  }
}
