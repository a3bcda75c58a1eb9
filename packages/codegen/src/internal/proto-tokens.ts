import { skipEnd } from './proto-source';

/** The kinds of token protoc's tokenizer tells apart that the source rewrites need. */
export type TokenKind = 'gap' | 'word' | 'number' | 'dot' | 'punct';

/** One token: `gap` is whitespace or a comment, a string literal is one `punct`. */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

/** protoc's number tokens (`1.5`, `.5`, `1.e5`, `0x1F`), with any letters glued after them. */
const NUMBER = /^(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\w*/;

/** `source` as tokens, their texts in order making it up again. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const rest = source.slice(i, i + 200);
    const skipped = skipEnd(source, i);
    const quoted = source[i] === '"' || source[i] === "'";
    let kind: TokenKind;
    let end: number;
    if (skipped > i) {
      [kind, end] = [quoted ? 'punct' : 'gap', skipped];
    } else if (/\s/.test(source[i])) {
      [kind, end] = ['gap', i + (/^\s+/.exec(rest)?.[0].length ?? 1)];
    } else if (NUMBER.test(rest)) {
      [kind, end] = ['number', i + (NUMBER.exec(rest)?.[0].length ?? 1)];
    } else if (/[A-Za-z_]/.test(source[i])) {
      [kind, end] = ['word', i + (/^\w+/.exec(rest)?.[0].length ?? 1)];
    } else {
      [kind, end] = [source[i] === '.' ? 'dot' : 'punct', i + 1];
    }
    tokens.push({ kind, text: source.slice(i, end) });
    i = end;
  }
  return tokens;
}
