import { GranaryError, SerializationRegistry } from '@granary/core';

/** An exported error class as the check sees it. */
type ErrorClassLike = (abstract new (...args: never[]) => Error) & {
  readonly code?: unknown;
  is?: (err: unknown) => boolean;
};

/** What {@link checkErrorClasses} may be told about a package. */
export interface CheckErrorClassesOptions {
  /**
   * The same package's exports loaded a second time (`loadModuleCopy`): each class must
   * recognise the copy's errors with `is()`, though `instanceof` cannot.
   */
  copy?: Record<string, unknown>;
  /**
   * Classes that share their code with a class of another package on purpose (pool's
   * `PoolAbortError` has core's ERR_ABORTED): they come off the wire as that class, so only
   * `is()` is checked for them.
   */
  sharedCodes?: readonly string[];
}

/**
 * Checks every error class a package exports against the rules of Granary's error hierarchy and
 * returns what breaks them (empty: all good): each class extends core's `GranaryError`, declares
 * its own static `code` (unique in the package), comes back from the wire as itself with `is()`
 * true, and (with `copy`) recognises another copy's errors and subclasses by code.
 *
 * @example
 * expect(checkErrorClasses(pool, { copy: loadModuleCopy(require.resolve('../src/index')) }))
 *   .to.deep.equal([]);
 */
export function checkErrorClasses(
  exports: Record<string, unknown>,
  options: CheckErrorClassesOptions = {},
): string[] {
  const problems: string[] = [];
  const classes = errorClassesIn(exports);
  if (classes.length === 0) problems.push('no error classes exported');
  const codes = new Map<unknown, string>();
  const registry = new SerializationRegistry();
  for (const [name, errorClass] of classes) {
    if (errorClass !== GranaryError && !(errorClass.prototype instanceof GranaryError)) {
      problems.push(`${name} does not extend GranaryError`);
      continue;
    }
    const code = errorClass.code;
    if (!Object.prototype.hasOwnProperty.call(errorClass, 'code') || typeof code !== 'string') {
      problems.push(`${name} declares no static code of its own`);
      continue;
    }
    if (codes.has(code)) problems.push(`${name} has the code ${code} of ${codes.get(code)}`);
    codes.set(code, name);
    const out = registry.serialize(unconstructed(errorClass, name));
    const back = registry.deserialize(out.typeName, out.bytes, out.format);
    if (errorClass.is?.(back) !== true) problems.push(`${name}.is() is false after the wire`);
    if (!(back instanceof errorClass) && !options.sharedCodes?.includes(name)) {
      problems.push(`${name} does not come off the wire as itself (registerErrorClasses)`);
    }
  }
  if (options.copy) problems.push(...copyProblems(classes, errorClassesIn(options.copy)));
  return problems;
}

function copyProblems(
  ours: Array<[string, ErrorClassLike]>,
  theirs: Array<[string, ErrorClassLike]>,
): string[] {
  const problems: string[] = [];
  const theirsByName = new Map(theirs);
  for (const [name, errorClass] of ours) {
    const other = theirsByName.get(name);
    if (other === undefined || other === errorClass) {
      problems.push(`${name}: the copy does not have its own class`);
      continue;
    }
    const err = unconstructed(other, name);
    if (err instanceof errorClass) problems.push(`${name}: the copy shares the class`);
    // The class itself and every exported base class of it recognise the copy's error.
    for (const [baseName, base] of ours) {
      if (base !== errorClass && !(errorClass.prototype instanceof base)) continue;
      if (base.is?.(err) !== true)
        problems.push(`${baseName}.is() is false for the copy's ${name}`);
    }
  }
  return problems;
}

function errorClassesIn(exports: Record<string, unknown>): Array<[string, ErrorClassLike]> {
  return Object.entries(exports).filter(
    (entry): entry is [string, ErrorClassLike] =>
      typeof entry[1] === 'function' &&
      (entry[1] as { prototype?: unknown }).prototype instanceof Error,
  );
}

/**
 * An instance of `errorClass` whose constructor did not run (constructors want arguments the
 * check cannot invent), with the name and code an instance would have.
 */
function unconstructed(errorClass: ErrorClassLike, name: string): Error {
  const err = Reflect.construct(Error, [`a ${name}`], errorClass) as Error;
  Object.assign(err, { name, code: errorClass.code });
  return err;
}
