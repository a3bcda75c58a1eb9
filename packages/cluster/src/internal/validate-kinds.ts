import { InvalidOptionError } from '@granary/core';
import type { KindSpec } from '../cluster-options';

/**
 * Normalises the kinds option; throws on a bare name (the string form hosts nothing), a bad
 * shardCount or a duplicate name.
 */
export function validateKinds(
  kinds: ReadonlyArray<KindSpec>,
  defaultShardCount: number,
): Array<{ name: string; shardCount: number }> {
  if (!Number.isInteger(defaultShardCount) || defaultShardCount < 1) {
    throw new InvalidOptionError('shardCount', `must be an integer >= 1, got ${defaultShardCount}`);
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
    if (!Number.isInteger(shardCount) || shardCount < 1) {
      throw new InvalidOptionError(
        'shardCount',
        `kind '${name}': must be an integer >= 1, got ${shardCount}`,
      );
    }
    return { name, shardCount };
  });
}
