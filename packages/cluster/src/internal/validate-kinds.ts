import { InvalidOptionError } from '@granary/core';
import type { KindSpec } from '../cluster-options';
import { MAX_SHARD_COUNT, type KindShards } from '../placement/kind-ranges';

/**
 * Normalises the kinds option: each kind's shard count and claim ranges (min(shardCount,
 * claimRanges)); throws on a bare name (the string form hosts nothing), a bad shardCount, a bad
 * claimRanges or a duplicate name.
 */
export function validateKinds(
  kinds: ReadonlyArray<KindSpec>,
  defaultShardCount: number,
  claimRanges: number,
): Array<{ name: string; shards: KindShards }> {
  if (!validCount(defaultShardCount)) {
    throw new InvalidOptionError(
      'shardCount',
      `must be an integer in [1, ${MAX_SHARD_COUNT}], got ${defaultShardCount}`,
    );
  }
  if (!validCount(claimRanges)) {
    throw new InvalidOptionError(
      'claimRanges',
      `must be an integer in [1, ${MAX_SHARD_COUNT}], got ${claimRanges}`,
    );
  }
  const seen = new Set<string>();
  return kinds.map((spec) => {
    if (typeof spec === 'string') {
      // A bare name used to be accepted and hosted nothing: every call to it timed out.
      throw new InvalidOptionError(
        'kinds',
        `'${spec}' is only a name: pass kind(${JSON.stringify(spec)}, () => new MyGrain()) to host grains of it (a generated kind helper does the same); { name: ${JSON.stringify(spec)} } claims its shards without hosting grains`,
      );
    }
    const name = spec?.name;
    if (typeof name !== 'string' || name.length === 0 || name.includes('/')) {
      throw new InvalidOptionError(
        'kinds',
        `a kind name must be a non-empty string without '/', got ${JSON.stringify(name)}`,
      );
    }
    if (seen.has(name)) throw new InvalidOptionError('kinds', `duplicate kind name '${name}'`);
    seen.add(name);
    const shardCount = spec.shardCount ?? defaultShardCount;
    if (!validCount(shardCount)) {
      throw new InvalidOptionError(
        'shardCount',
        `kind '${name}': must be an integer in [1, ${MAX_SHARD_COUNT}], got ${shardCount}`,
      );
    }
    return { name, shards: { shardCount, ranges: Math.min(shardCount, claimRanges) } };
  });
}

function validCount(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= MAX_SHARD_COUNT;
}
