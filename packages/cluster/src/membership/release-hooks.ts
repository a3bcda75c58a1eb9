/** Runs before this member releases a shard on rebalance or graceful shutdown (drain grains). */
export type BeforeReleaseHook = (kind: string, shard: number) => void | Promise<void>;

/**
 * Runs each hook over each shard of a range, in order (hook by hook), from step `from` on; a
 * hook that throws or rejects is reported to `failed` and the rest still run. Returns undefined
 * when every hook returned at once (the usual case: a shard with no activation to end), else a
 * promise of the remaining steps: a release then needs no turn of its own per range.
 */
export function runReleaseHooks(
  kind: string,
  hooks: readonly BeforeReleaseHook[],
  shards: readonly number[],
  failed: (err: unknown, shard: number) => void,
  from = 0,
): Promise<void> | undefined {
  const steps = hooks.length * shards.length;
  for (let i = from; i < steps; i++) {
    const shard = shards[i % shards.length];
    let pending: void | Promise<void>;
    try {
      pending = hooks[Math.floor(i / shards.length)](kind, shard);
    } catch (err) {
      failed(err, shard);
      continue;
    }
    if (pending !== undefined) {
      const next = (): Promise<void> | undefined =>
        runReleaseHooks(kind, hooks, shards, failed, i + 1);
      return Promise.resolve(pending).then(next, (err: unknown) => {
        failed(err, shard);
        return next();
      });
    }
  }
  return undefined;
}
