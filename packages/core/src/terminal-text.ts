/**
 * What a terminal or a log reader acts on rather than shows: C0 controls (ESC starts colour,
 * cursor and title sequences; CR and LF start a forged line), DEL, C1 controls (U+009B is an
 * 8-bit CSI) and the bidirectional overrides and isolates (they reorder what follows them).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const ALL_CONTROLS = new RegExp(TERMINAL_CONTROLS.source, 'g');

/**
 * `text` with every TERMINAL_CONTROLS character written as a `\uNNNN` escape (also a JSON
 * escape, so JSON stays valid and reads back the same), but line feeds when `keepNewlines`.
 * Text from outside (a grain identity chosen by a caller, a peer's error message) goes through
 * this before a CLI prints it or a text logger writes it: raw, it retitled the operator's
 * terminal or forged lines.
 */
export function escapeTerminalControls(text: string, keepNewlines = false): string {
  return text.replace(ALL_CONTROLS, (c) =>
    keepNewlines && c === '\n' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
