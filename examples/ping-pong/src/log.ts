import {
  escapeTerminalControls,
  TERMINAL_CONTROLS,
  type Logger,
  type LogFn,
  type LogLevel,
} from '@granary/core';

const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/** `key=value`, quoting values with spaces, quotes or controls so the line parses back. */
function field(key: string, value: unknown): string {
  let text: string;
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    text = `${value.name}${typeof code === 'string' ? `(${code})` : ''}: ${value.message}`;
  } else if (typeof value === 'object' && value !== null) text = JSON.stringify(value);
  else text = String(value);
  const quote = /[\s"]/.test(text) || TERMINAL_CONTROLS.test(text);
  return `${key}=${quote ? escapeTerminalControls(JSON.stringify(text)) : text}`;
}

/**
 * The example's logger: one human-readable line per event on stdout
 * (`12:00:01.234 info  pong cnt=3 via=rpc node=ponger-a ms=2`), pino-compatible so the same
 * object is passed to the cluster and the actor system. The demo runner prefixes each line
 * with the node name and parses the pong and activation lines.
 */
export function createNodeLogger(
  level: LogLevel = 'info',
  bindings: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  const min = LEVELS[level];
  const at =
    (lvl: LogLevel): LogFn =>
    (objOrMsg, msg) => {
      if (LEVELS[lvl] < min) return;
      const fields = typeof objOrMsg === 'string' ? {} : (objOrMsg as Record<string, unknown>);
      const text = typeof objOrMsg === 'string' ? objOrMsg : (msg ?? '');
      const parts = [
        new Date().toISOString().slice(11, 23),
        lvl.padEnd(5),
        escapeTerminalControls(text),
      ];
      for (const [k, v] of Object.entries({ ...bindings, ...fields })) {
        if (v !== undefined) parts.push(field(k, v));
      }
      write(parts.join(' '));
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => createNodeLogger(level, { ...bindings, ...more }, write),
  };
}
