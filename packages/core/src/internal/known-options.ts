import { InvalidOptionError } from '../errors';

/** A name this close (edits) to a known one is taken for a misspelling of it. */
const MAX_SUGGESTION_DISTANCE = 3;

/**
 * Throws InvalidOptionError naming the first option of `options` that `known` lacks, and the
 * known option it most likely meant. Options often come from JavaScript or a config object,
 * where TypeScript's excess-property check does not reach: an option under a wrong name was
 * ignored, so its default ran instead (`kind: [...]` hosted nothing, `idleTimeout` never applied).
 */
export function rejectUnknownOptions(
  where: string,
  options: object,
  known: Readonly<Record<string, true>>,
  elsewhere?: Readonly<Record<string, string>>,
): void {
  const unknown = unknownOptionOf(where, options, known, elsewhere);
  if (unknown !== undefined) throw new InvalidOptionError(unknown.name, unknown.detail);
}

/**
 * The first option of `options` that `known` lacks, with a message naming the known option it
 * most likely meant, or where it belongs (`elsewhere`: name -> what takes it); for callers whose
 * options are a call's argument (InvalidArgumentError).
 */
export function unknownOptionOf(
  where: string,
  options: object,
  known: Readonly<Record<string, true>>,
  elsewhere?: Readonly<Record<string, string>>,
): { name: string; detail: string } | undefined {
  for (const name of Object.keys(options)) {
    if (Object.prototype.hasOwnProperty.call(known, name)) continue;
    if (elsewhere !== undefined && Object.prototype.hasOwnProperty.call(elsewhere, name)) {
      return { name, detail: `${where} has no option '${name}': give it to ${elsewhere[name]}` };
    }
    const meant = closest(name, Object.keys(known));
    const hint = meant === undefined ? '' : ` (did you mean '${meant}'?)`;
    return { name, detail: `${where} has no option '${name}'${hint}` };
  }
  return undefined;
}

/**
 * `options` without the keys whose value is `undefined`, to merge over defaults: an option
 * given as `undefined` (`keyPrefix: process.env.PREFIX` with the variable unset, a config
 * object's empty field) takes its default, as its type `keyPrefix?: string` says. Spread as it
 * was, it replaced the default with `undefined`: a store's keys became `undefined{kind/id}`.
 */
export function withoutUndefined<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}

/**
 * rejectUnknownOptions for an options object inside options (`remote`, a kind's `state`): the
 * error's option is `name.option`. Anything that is not a plain object is left to its own checks.
 */
export function rejectUnknownNestedOptions(
  where: string,
  name: string,
  value: unknown,
  known: Readonly<Record<string, true>>,
): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const unknown = unknownOptionOf(`${where}'s ${name}`, value, known);
  if (unknown !== undefined)
    throw new InvalidOptionError(`${name}.${unknown.name}`, unknown.detail);
}

function closest(name: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = MAX_SUGGESTION_DISTANCE + 1;
  for (const k of known) {
    const d = k.toLowerCase().startsWith(name.toLowerCase())
      ? 1
      : distance(name.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** Levenshtein distance (option names are short). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length]!;
}
