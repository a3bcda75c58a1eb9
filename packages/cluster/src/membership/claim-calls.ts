import type { ClaimResult, ClusterProvider, ReleaseRequest } from '../providers/cluster-provider';

/**
 * Claims `ranges` of `kind`: one provider call when the provider takes a batch (claimMany),
 * else one call per range, each answered on its own as it settles (etcd answers a window of
 * transactions at a time, and the member's reconcile queue resumes as claims settle). Calls
 * `answered` or `failed` once per range (by its index in `ranges`); resolves after the last.
 */
export async function claimRanges(
  provider: ClusterProvider,
  kind: string,
  ranges: readonly number[],
  wanted: (range: number) => boolean,
  answered: (i: number, result: ClaimResult) => void,
  failed: (i: number, err: unknown) => void,
): Promise<void> {
  if (provider.claimMany !== undefined) {
    let results: ClaimResult[] | undefined;
    let failure: unknown;
    try {
      results = await provider.claimMany(kind, ranges, wanted);
    } catch (err) {
      failure = err;
    }
    for (let i = 0; i < ranges.length; i++) {
      const result = results?.[i];
      if (result !== undefined) answered(i, result);
      else failed(i, failure ?? new Error(`claimMany answered no result for ${kind}/${ranges[i]}`));
    }
    return;
  }
  await Promise.all(
    ranges.map((range, i) =>
      call(() => provider.claim(kind, range, () => wanted(range))).then(
        (result) => answered(i, result),
        (err: unknown) => failed(i, err),
      ),
    ),
  );
}

/**
 * Releases claims of `kind` in the store: one provider call when the provider takes a batch
 * (releaseMany; if it fails, each release counts as failed), else one per claim. Calls `settled`
 * once per item (by index) with the error that failed it, if any; resolves after the last.
 */
export async function releaseClaims(
  provider: ClusterProvider,
  kind: string,
  items: readonly ReleaseRequest[],
  settled: (i: number, err: unknown) => void,
): Promise<void> {
  if (provider.releaseMany !== undefined) {
    let failure: unknown;
    try {
      await provider.releaseMany(kind, items);
    } catch (err) {
      failure = err ?? new Error(`releaseMany of ${kind} failed`);
    }
    for (let i = 0; i < items.length; i++) settled(i, failure);
    return;
  }
  await Promise.all(
    items.map((it, i) =>
      call(() => provider.release(kind, it.shard, it.epoch, it.to)).then(
        () => settled(i, undefined),
        (err: unknown) => settled(i, err ?? new Error(`release of ${kind}/${it.shard} failed`)),
      ),
    ),
  );
}

/** A provider call whose synchronous throw becomes a rejection, as an async method's would. */
function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}
