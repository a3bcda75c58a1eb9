/** Most items sent in one batch (kept equal to SEED_BATCH_MAX: the seed's request bound). */
const MAX_ITEMS = 512;

/**
 * Collects the calls made in one event-loop turn and sends them as one batch per key (a lease
 * id, for example), at most MAX_ITEMS items each: a join that claims thousands of ranges costs a
 * handful of requests instead of one each. `send` resolves with one result per item, in order;
 * if it fails, every call of the batch fails with its error.
 */
export class TickBatch<T, R> {
  private pending = new Map<
    number,
    Array<{ item: T; resolve(r: R): void; reject(e: unknown): void }>
  >();
  private scheduled = false;

  constructor(private readonly send: (items: T[], key: number) => Promise<R[]>) {}

  /** Queues one item under `key`; resolves with its result. */
  add(item: T, key: number): Promise<R> {
    return new Promise((resolve, reject) => {
      let list = this.pending.get(key);
      if (!list) this.pending.set(key, (list = []));
      list.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = new Map();
    for (const [key, list] of pending) {
      for (let i = 0; i < list.length; i += MAX_ITEMS) {
        const chunk = list.slice(i, i + MAX_ITEMS);
        this.send(
          chunk.map((c) => c.item),
          key,
        ).then(
          (results) => chunk.forEach((c, j) => c.resolve(results[j] as R)),
          (err: unknown) => chunk.forEach((c) => c.reject(err)),
        );
      }
    }
  }
}
