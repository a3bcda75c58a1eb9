import { unescapeC } from './c-escapes';
import { skipEnd } from './proto-source';

/*
 * protobufjs reads a string literal's escapes unlike protoc: it drops `\u00e9` to `u00e9`, and
 * takes each octal or hex escape (`\303\251`, UTF-8 for `é`) as one Latin-1 character. So a
 * proto2 `[default = "\u00e9"]` would come out wrong in granary-codegen only. Before parsing,
 * every literal with such an escape is rewritten as protoc reads it, its characters written out
 * (protobufjs reads those as they are); a literal whose bytes are not UTF-8 is left alone.
 */

/** An escape protobufjs reads differently: `\u`, `\U`, or a byte above 0x7f. */
const DIVERGENT_ESCAPE = /\\(?:[uU]|[xX][89a-fA-F][0-9a-fA-F]|[23][0-7]{2})/;

/** `source` with each string literal holding a divergent escape written as protoc reads it. */
export function normalizeStringLiterals(source: string): string {
  if (!DIVERGENT_ESCAPE.test(source)) return source;
  let out = '';
  let i = 0;
  while (i < source.length) {
    const end = skipEnd(source, i);
    if (end === i) {
      out += source[i++];
      continue;
    }
    const token = source.slice(i, end);
    const quote = token[0];
    const isString = (quote === '"' || quote === "'") && token.length > 1 && token.endsWith(quote);
    out += isString && DIVERGENT_ESCAPE.test(token) ? rewritten(token) : token;
    i = end;
  }
  return out;
}

/** A literal (with its quotes) as protoc reads it, or unchanged when its bytes are not UTF-8. */
function rewritten(literal: string): string {
  let text: string;
  try {
    const bytes = Uint8Array.from(unescapeC(literal.slice(1, -1)));
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return literal;
  }
  const body = [...text]
    .map((c) => {
      const code = c.codePointAt(0) ?? 0;
      if (c === '\\' || c === '"') return `\\${c}`;
      return code < 0x20 || code === 0x7f ? `\\${code.toString(8).padStart(3, '0')}` : c;
    })
    .join('');
  return `"${body}"`;
}
