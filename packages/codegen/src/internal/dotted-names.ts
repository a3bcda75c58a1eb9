import { tokenize } from './proto-tokens';
import type { Token } from './proto-tokens';

/*
 * protoc's tokenizer makes `.` a token of its own, so a dotted name may have whitespace and
 * comments around its dots (`package a . b;`, `(a . b).c`, `extend . google.protobuf.X`,
 * `map<string, a . B>`, `rpc R(stream . a.B)`); protobufjs reads most names as one token and
 * refuses them. Before it parses, each dotted name is written as one token: whitespace and
 * comments around its dots go, their line breaks move after the name, so every line keeps its
 * number. A label glued to a type (`optional.a.B`), which protoc reads as the label and `.a.B`,
 * gets its space back. A minus sign is a token of its own too (`A = - 1;`, `[default = - inf]`,
 * `reserved - 5 to - 3;`): it is joined to its number the same way.
 */

/** Words that, where they start a statement (or `stream` after `(`), come before a type. */
const LABELS = new Set(['optional', 'required', 'repeated', 'extend']);
/** Tokens a pending line break may go before: a name ends there. */
const NAME_END = /^[;{}[\]=,<>:]$/;

/** `source` with every dotted name written as one token (see above). */
export function normalizeDottedNames(source: string): string {
  if (!/[\s/]\.|[.-][\s/]|\b(?:optional|required|repeated|stream|extend)\./.test(source)) {
    return source;
  }
  const tokens = tokenize(source);
  const dropped = new Set<number>(); // gaps inside a name
  const spaced = new Set<number>(); // labels glued to a leading dot
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].text === '-') {
      const next = significant(tokens, i, 1);
      if (tokens[next]?.kind === 'number' || tokens[next]?.kind === 'word') {
        for (let g = i + 1; g < next; g++) dropped.add(g);
      }
    }
    if (tokens[i].kind !== 'dot') continue;
    const next = significant(tokens, i, 1);
    if (tokens[next]?.kind === 'word') for (let g = i + 1; g < next; g++) dropped.add(g);
    const previous = significant(tokens, i, -1);
    const before = tokens[previous];
    if (before === undefined) continue;
    if (before.kind === 'word' && isLabel(tokens, previous)) {
      if (previous === i - 1) spaced.add(previous);
    } else if (before.kind === 'word' || before.text === ')') {
      for (let g = previous + 1; g < i; g++) dropped.add(g);
    }
  }
  let out = '';
  let breaks = '';
  tokens.forEach((token, i) => {
    if (dropped.has(i)) {
      breaks += token.text.replace(/[^\n]/g, '');
      return;
    }
    if (breaks !== '' && (token.kind === 'gap' || NAME_END.test(token.text))) {
      out += breaks;
      breaks = '';
    }
    out += spaced.has(i) ? `${token.text} ` : token.text;
  });
  return out + breaks;
}

/** Whether the word at `i` is a label (or `extend`, `stream`) in front of a type. */
function isLabel(tokens: readonly Token[], i: number): boolean {
  const word = tokens[i].text;
  const before = tokens[significant(tokens, i, -1)]?.text;
  if (word === 'stream') return before === '(';
  return LABELS.has(word) && (before === undefined || /^[;{}]$/.test(before));
}

/** The index of the first token from `i` in direction `step` that is not a gap. */
function significant(tokens: readonly Token[], i: number, step: 1 | -1): number {
  let j = i + step;
  while (tokens[j]?.kind === 'gap') j += step;
  return j;
}
