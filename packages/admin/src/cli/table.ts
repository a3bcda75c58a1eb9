import { escapeTerminalControls } from '@granary/core';

/**
 * `text` with every character a terminal would act on written as a `\uNNNN` escape (core's
 * escapeTerminalControls). Grain identities come from whoever calls the grains (a web app
 * passing its users' input on), so what the CLI prints from the cluster goes through this.
 * `keepNewlines` leaves the line breaks of text the CLI laid out itself (each table cell was
 * escaped whole before).
 */
export function printable(text: string, keepNewlines = false): string {
  return escapeTerminalControls(text, keepNewlines);
}

/**
 * Renders rows as a plain text table (header, then aligned columns; numbers right-aligned),
 * each cell made printable.
 */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => printable(String(c))));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const numeric = header.map(
    (_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'),
  );
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)].join('\n') + '\n';
}

/** A duration in ms as `1h 2m`, `3m 4s`, `5.6s` or `78ms`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.floor(s % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}
