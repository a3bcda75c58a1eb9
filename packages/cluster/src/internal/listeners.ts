/** A set of listeners; one throwing listener neither stops the others nor the emitter. */
export class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** Adds a listener; the returned function removes it. */
  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  /** Calls every listener with `value`. */
  emit(value: T): void {
    for (const listener of [...this.set]) {
      try {
        listener(value);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.set.clear();
  }
}
