import { InvalidOptionError } from '@granary/core';
import type { KindSpec } from '../cluster-options';

/** Normalises the kinds option; throws on a bad shardCount or a duplicate name. */
export function validateKinds(
  kinds: ReadonlyArray<KindSpec>,
  defaultShardCount: number,
): Array<{ name: string; shardCount: number }> {
  if (!Number.isInteger(defaultShardCount) || defaultShardCount < 1) {
    throw new InvalidOptionError('shardCount', `must be an integer >= 1, got ${defaultShardCount}`);
  }
  const seen = new Set<string>();
  return kinds.map((spec) => {
    const name = typeof spec === 'string' ? spec : spec?.name;
    if (typeof name !== 'string' || name.length === 0 || name.includes('/')) {
      throw new InvalidOptionError(
        'kinds',
        `a kind name must be a non-empty string without '/', got ${JSON.stringify(name)}`,
      );
    }
    if (seen.has(name)) throw new InvalidOptionError('kinds', `duplicate kind name '${name}'`);
    seen.add(name);
    const shardCount =
      (typeof spec === 'string' ? undefined : spec.shardCount) ?? defaultShardCount;
    if (!Number.isInteger(shardCount) || shardCount < 1) {
      throw new InvalidOptionError(
        'shardCount',
        `kind '${name}': must be an integer >= 1, got ${shardCount}`,
      );
    }
    return { name, shardCount };
  });
}
