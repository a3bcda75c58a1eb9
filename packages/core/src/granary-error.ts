/**
 * The root of every error class in Granary's packages, and what makes an error survive a copy of
 * the package or a trip over the wire: the class's `code`.
 */

/** An error as plain data: what {@link GranaryError.toJSON} returns and the remote sends. */
export interface ErrorData {
  name: string;
  /** Absent for an error that has no string `code` (a plain `Error`, a `TypeError`...). */
  code?: string;
  message: string;
  /** The error's own fields that are strings, numbers, booleans, null or arrays of those. */
  data?: Record<string, unknown>;
  /** The cause, when it is an `Error` (a few levels deep at most). */
  cause?: ErrorData;
}

/** A class whose errors `is()` can recognise: it has a static `code`. */
type CodedClass = { readonly code: string };

/** Causes nested deeper than this are left off the data (a chain of wrappers, not a tree). */
const MAX_CAUSE_DEPTH = 3;
/** Fields an error carries anyway or that are local to the process that made it. */
const NOT_DATA = new Set(['name', 'code', 'message', 'stack', 'cause']);

/**
 * Base of every error Granary throws or rejects with: a fixed `name`, a stable `code` string
 * callers can switch on, and the `cause` where there is one. Each subclass declares its code as
 * `static code`; every instance has that code.
 *
 * Match errors with the class's {@link GranaryError.is} rather than `instanceof`: it compares
 * codes, so it also recognises an error made by another installed copy of the package, or one
 * that crossed the wire and came back as a {@link RemoteError}.
 *
 * @example
 * class InsufficientFundsError extends GranaryError {
 *   static override readonly code = 'ERR_INSUFFICIENT_FUNDS';
 *   override readonly name = 'InsufficientFundsError';
 *   constructor(readonly balance: number) {
 *     super(`balance ${balance} is too low`);
 *   }
 * }
 * registerErrorClasses(InsufficientFundsError); // rebuilt as itself when it comes off the wire
 * if (InsufficientFundsError.is(err)) console.log(err.balance);
 */
export class GranaryError extends Error {
  /** The code of the errors of this class; subclasses declare their own. */
  static readonly code: string = 'ERR_GRANARY';

  override readonly name: string = 'GranaryError';
  /** Stable machine-readable code, e.g. `ERR_TIMEOUT`: the static `code` of the class. */
  readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = (new.target as unknown as CodedClass).code;
  }

  /**
   * True when `err` is an error of this class or a subclass, by code: its own `code` is this
   * class's code, or a class in its prototype chain declares this code (so a subclass made by
   * another copy of the package matches its base class here too).
   */
  static is<T extends Error>(this: abstract new (...args: never[]) => T, err: unknown): err is T {
    return hasCode(err, (this as unknown as CodedClass).code);
  }

  /** The error as data: name, code, message, its own plain fields and the cause. */
  toJSON(): ErrorData {
    return errorData(this);
  }
}

/**
 * An error that crossed the wire and whose code has no class registered here
 * (`registerErrorClasses`): `name`, `code` and `message` are the original error's, so a
 * caller can branch on them (and `SomeError.is(err)` matches by the code) as if the error had
 * been thrown locally.
 */
export class RemoteError extends GranaryError {
  static override readonly code = 'ERR_REMOTE';
  override readonly name: string;
  override readonly code: string;

  constructor(name: string, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.code = code;
  }
}

/** True when `err` has `code`, or a class of its prototype chain declares it (`static code`). */
export function hasCode(err: unknown, code: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { code?: unknown }).code === code) return true;
  for (let p: unknown = Object.getPrototypeOf(err); p !== null; p = Object.getPrototypeOf(p)) {
    if (!Object.prototype.hasOwnProperty.call(p, 'constructor')) continue;
    const ctor = (p as { constructor: unknown }).constructor;
    if (typeof ctor === 'function' && Object.prototype.hasOwnProperty.call(ctor, 'code')) {
      if ((ctor as unknown as CodedClass).code === code) return true;
    }
  }
  return false;
}

/** The data of any `Error` (see {@link ErrorData}); what the remote sends for it. */
export function errorData(error: Error, depth = 0): ErrorData {
  const out: ErrorData = { name: String(error.name), message: String(error.message) };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  let data: Record<string, unknown> | undefined;
  for (const key of Object.keys(error)) {
    if (NOT_DATA.has(key)) continue;
    const value = (error as unknown as Record<string, unknown>)[key];
    if (!isPlainValue(value)) continue;
    (data ??= {})[key] = value;
  }
  if (data !== undefined) out.data = data;
  if (error.cause instanceof Error && depth < MAX_CAUSE_DEPTH) {
    out.cause = errorData(error.cause, depth + 1);
  }
  return out;
}

function isPlainValue(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      return Array.isArray(value) && value.every((v) => v === null || isScalar(v));
    default:
      return false;
  }
}

function isScalar(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || Number.isFinite(v);
}

/** A Granary error class, rebuilt as itself (not RemoteError) when its code comes off the wire. */
export type ErrorClass = (abstract new (...args: never[]) => Error) & { readonly code?: string };

/**
 * An error rebuilt from its data: an instance of `errorClass` when given (fields set, no
 * constructor run), else a {@link RemoteError}. The cause is rebuilt the same way.
 */
export function errorFromData(
  data: ErrorData,
  classOf: (code: string) => ErrorClass | undefined,
): Error {
  const cause = data.cause === undefined ? undefined : errorFromData(data.cause, classOf);
  const errorClass = data.code === undefined ? undefined : classOf(data.code);
  const error: Error = errorClass
    ? (Object.create(errorClass.prototype as object) as Error)
    : new RemoteError(data.name, data.code ?? 'ERR_REMOTE', data.message, { cause });
  const value = (v: unknown): PropertyDescriptor => ({
    value: v,
    writable: true,
    configurable: true,
    enumerable: true,
  });
  if (errorClass) {
    Object.defineProperties(error, {
      name: value(data.name),
      code: value(data.code),
      message: { ...value(data.message), enumerable: false },
    });
    if (cause !== undefined)
      Object.defineProperty(error, 'cause', { ...value(cause), enumerable: false });
    // A class that marks itself stackless (an error made once per refused call under overload)
    // gets its name and message as its stack: a capture costs more than the refusal itself.
    if ((errorClass as { stackless?: boolean }).stackless === true) {
      Object.defineProperty(error, 'stack', {
        ...value(`${data.name}: ${data.message}`),
        enumerable: false,
      });
    } else Error.captureStackTrace(error, errorFromData);
  }
  if (data.data !== undefined) {
    for (const [key, v] of Object.entries(data.data)) {
      if (!NOT_DATA.has(key)) Object.defineProperty(error, key, value(v));
    }
  }
  return error;
}
