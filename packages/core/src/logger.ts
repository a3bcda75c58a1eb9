/** Log levels, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One logging method: pino-compatible `(obj, msg?)` or `(msg)`. */
export type LogFn = (objOrMsg: object | string, msg?: string) => void;

/**
 * The logger every package writes to. A pino logger satisfies it as it is: level methods taking
 * `(fields, msg)` or `(msg)`, `child(bindings)`, and errors passed under `err` (pino's standard
 * serializer prints them). Library code never uses the console.
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): Logger;
}

const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/** An error as pino's standard serializer writes it: type, message, stack, code. */
function serialize(value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return {
      type: value.name,
      message: value.message,
      ...(code === undefined ? {} : { code }),
      stack: value.stack,
    };
  }
  return value;
}

/**
 * A small JSON-lines logger to stderr (the default of every ActorSystem and Cluster, at `warn`:
 * never silent): pino's line shape (`level`, `time`, bindings, fields, `msg`), good enough for
 * development; production passes pino.
 */
export function createStderrLogger(
  level: LogLevel = 'warn',
  bindings: Record<string, unknown> = {},
): Logger {
  const min = LEVELS[level];
  const at =
    (lvl: LogLevel): LogFn =>
    (objOrMsg, msg) => {
      if (LEVELS[lvl] < min) return;
      const fields = typeof objOrMsg === 'string' ? {} : (objOrMsg as Record<string, unknown>);
      const line: Record<string, unknown> = { level: lvl, time: Date.now(), ...bindings };
      for (const [k, v] of Object.entries(fields)) line[k] = serialize(v);
      line.msg = typeof objOrMsg === 'string' ? objOrMsg : msg;
      process.stderr.write(`${JSON.stringify(line)}\n`);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => createStderrLogger(level, { ...bindings, ...more }),
  };
}

const noop: LogFn = () => {};

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = {
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
};
