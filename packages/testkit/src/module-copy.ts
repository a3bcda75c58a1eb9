import { dirname, sep } from 'node:path';

/**
 * Loads a second, separate instance of the CommonJS module `entry` and of every module it loads
 * from under `root` (by default `entry`'s folder), as a second installed copy of a package would
 * be: its classes are new ones, so `instanceof` against the first copy's classes is false. The
 * modules already loaded stay in place for everyone else.
 *
 * @example
 * const other = loadModuleCopy<typeof import('@granary/core')>(require.resolve('@granary/core'));
 * TimeoutError.is(new other.TimeoutError('a/b', 5)); // true, though not instanceof
 */
export function loadModuleCopy<T>(entry: string, root = dirname(entry)): T {
  const prefix = root.endsWith(sep) ? root : root + sep;
  const cache = require.cache;
  const first = new Map<string, NodeJS.Module | undefined>();
  for (const key of Object.keys(cache)) {
    if (!key.startsWith(prefix)) continue;
    first.set(key, cache[key]);
    delete cache[key];
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh load is the point
    return require(entry) as T;
  } finally {
    for (const key of Object.keys(cache)) if (key.startsWith(prefix)) delete cache[key];
    for (const [key, mod] of first) cache[key] = mod;
  }
}
