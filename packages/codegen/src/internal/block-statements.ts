import { tokenize } from './proto-tokens';
import type { Token } from './proto-tokens';

/*
 * Some statements protobufjs's parser reads without keeping what protoc checks (the options of
 * an extension range, whether a `reserved` list mixes names and numbers, `max` where a range
 * starts). This finds such statements again in a file's source, with the blocks they are in.
 */

/** A token and its offset in the source. */
export interface PlacedToken extends Token {
  readonly at: number;
}

/** One statement directly in a message (or group) or an enum body. */
export interface BlockStatement {
  readonly block: 'message' | 'enum';
  /** The names of the messages (and groups) it is in, outermost first. */
  readonly messages: readonly string[];
  /** From its keyword up to its `;` (left out), whitespace and comments left out. */
  readonly tokens: readonly PlacedToken[];
}

interface Block {
  readonly kind: 'message' | 'enum' | 'other';
  readonly name: string;
}

/** Every statement of `source` that starts with one of `keywords` in a message or enum body. */
export function blockStatements(source: string, keywords: ReadonlySet<string>): BlockStatement[] {
  let offset = 0;
  const tokens = tokenize(source)
    .map((t) => ({ ...t, at: (offset += t.text.length) - t.text.length }))
    .filter((t) => t.kind !== 'gap');
  const blocks: Block[] = [];
  const out: BlockStatement[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const { text } = tokens[i];
    const block = blocks[blocks.length - 1];
    if (text === '{') blocks.push(blockAt(tokens, i));
    else if (text === '}') blocks.pop();
    else if (
      keywords.has(text) &&
      block !== undefined &&
      block.kind !== 'other' &&
      /^[;{}]$/.test(tokens[i - 1]?.text ?? '')
    ) {
      const end = statementEnd(tokens, i);
      const messages = blocks.filter((b) => b.kind === 'message').map((b) => b.name);
      out.push({ block: block.kind, messages, tokens: tokens.slice(i, end) });
      i = end;
    }
  }
  return out;
}

/** What the body opening at the `{` at `i` is: a message or group, an enum, or other. */
function blockAt(tokens: readonly Token[], i: number): Block {
  let k = i - 1;
  if (tokens[k]?.text === ']') {
    let depth = 0;
    for (; k >= 0; k--) {
      if (tokens[k].text === ']') depth++;
      if (tokens[k].text === '[' && --depth === 0) break;
    }
    k--;
  }
  const named = tokens[k]?.kind === 'word' ? tokens[k].text : '';
  if (tokens[k - 1]?.text === 'message' && named !== '') return { kind: 'message', name: named };
  if (tokens[k - 1]?.text === 'enum' && named !== '') return { kind: 'enum', name: named };
  const group = tokens[k - 3]?.text === 'group' && tokens[k - 1]?.text === '=';
  if (group && tokens[k - 2]?.kind === 'word') return { kind: 'message', name: tokens[k - 2].text };
  return { kind: 'other', name: '' };
}

/** The index of the `;` ending the statement at `i` (brackets and aggregates skipped). */
function statementEnd(tokens: readonly Token[], i: number): number {
  let depth = 0;
  for (let k = i; k < tokens.length; k++) {
    const { text } = tokens[k];
    if (text === '[' || text === '{') depth++;
    if (text === ']' || text === '}') depth--;
    if ((text === ';' && depth === 0) || depth < 0) return k;
  }
  return tokens.length;
}
