import type { Logger } from '@granary/core';

/**
 * What the member scripts and in-process members of tests print: JSON lines on stdout for the
 * test to read (NodeProcess parses each line), errors on stderr, nothing else. One copy for
 * every package's fixtures and the benchmarks.
 */

/** Prints one JSON line per call, tagged with the node's id. */
export function lineWriter(node: string): (line: Record<string, unknown>) => void {
  return (line) => process.stdout.write(`${JSON.stringify({ ...line, node })}\n`);
}

/** The config a member script was started with: `process.argv[2]` as JSON. */
export function nodeConfig<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

/**
 * Drops debug, info and warn; prints errors to stderr (an Error by its message). Peers killed on
 * purpose make the remote and the providers warn: tests show only what can be a fault. A core
 * Logger (its child is itself), so it also fits a cluster's or a provider's `logger` option.
 */
export const errorsOnlyLogger: Logger = {
  debug: (): void => undefined,
  info: (): void => undefined,
  warn: (): void => undefined,
  error: (o: unknown, m?: string): void => {
    process.stderr.write(
      `ERROR ${m ?? ''} ${JSON.stringify(o, (_k, v: unknown) => (v instanceof Error ? v.message : v))}\n`,
    );
  },
  child: () => errorsOnlyLogger,
};

/** Drops every line (benchmarks, and tests whose failures are their assertions). */
export const silentLogger: Logger = {
  debug: (): void => undefined,
  info: (): void => undefined,
  warn: (): void => undefined,
  error: (): void => undefined,
  child: () => silentLogger,
};

/** One line given to a {@link recordingLogger}. */
export interface RecordedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  /** The fields object the line was logged with (empty when none). */
  fields: Record<string, unknown>;
}

/**
 * A logger that keeps the lines it is given, in order (tests that assert what was logged, and
 * how often). A core Logger whose child is itself, so it fits a cluster's or a provider's option.
 */
export function recordingLogger(): { logger: Logger; lines: RecordedLine[] } {
  const lines: RecordedLine[] = [];
  const at =
    (level: RecordedLine['level']) =>
    (a: unknown, b?: string): void => {
      const fields = typeof a === 'object' && a !== null ? (a as Record<string, unknown>) : {};
      lines.push({ level, msg: typeof a === 'string' ? a : (b ?? ''), fields });
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return { logger, lines };
}
