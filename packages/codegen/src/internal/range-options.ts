import { Root, Type, parse } from 'protobufjs';
import type { Namespace } from 'protobufjs';
import type { DeclaredOptions } from './check-options';
import { tokenize } from './proto-tokens';
import type { Token } from './proto-tokens';

/*
 * `extensions 100 to 199 [verification = UNVERIFIED];`: protobufjs's parser reads the options of
 * an extension range and drops them, so granary-codegen accepted any. protoc checks them as
 * any other options, against google.protobuf.ExtensionRangeOptions. Here each such list is found
 * again in the source (with the message it is in) and parsed as a field's options, which
 * protobufjs keeps in order, so that checkOptions sees them as protoc does.
 */

/** One `extensions ... [options];` statement: the message it is in, its `[...]` text. */
interface RangeOptions {
  readonly message: string[];
  readonly list: string;
  readonly line: number;
}

/**
 * The options of the extension ranges of `file` (its `source` as parsed, package `pkg`), for
 * checkOptions, with `root`'s message as the scope names resolve from.
 */
export function extensionRangeOptions(
  root: Root,
  file: string,
  pkg: string,
  source: string,
): DeclaredOptions[] {
  if (!/\bextensions\b[^;]*\[/.test(source)) return [];
  const out: DeclaredOptions[] = [];
  for (const { message, list, line } of rangeOptionLists(source)) {
    const found = root.lookup([...(pkg === '' ? [] : [pkg]), ...message].join('.'));
    const scope: Namespace = found instanceof Type ? found : root;
    const host = parse(
      `syntax = "proto2"; message X { optional int32 f = 1 ${list}; }`,
      new Root(),
      {
        keepCase: true,
      },
    ).root.lookup('X');
    const field = host instanceof Type ? host.fields.f : undefined;
    const options = (field?.parsedOptions ?? []) as Record<string, unknown>[];
    if (options.length > 0) out.push({ kind: 'extension range', scope, file, options, line });
  }
  return out;
}

/** Every `extensions` statement of `source` with a `[...]` list, and the message it is in. */
function rangeOptionLists(source: string): RangeOptions[] {
  let offset = 0;
  const tokens = tokenize(source)
    .map((t) => ({ ...t, at: (offset += t.text.length) - t.text.length }))
    .filter((t) => t.kind !== 'gap');
  const scopes: (string | null)[] = []; // one per open `{`: the message's name, else null
  const out: RangeOptions[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const { text } = tokens[i];
    if (text === '{') scopes.push(messageName(tokens, i));
    else if (text === '}') scopes.pop();
    else if (text === 'extensions' && /^[;{}]$/.test(tokens[i - 1]?.text ?? '')) {
      let j = i + 1;
      while (j < tokens.length && tokens[j].text !== ';' && tokens[j].text !== '[') j++;
      if (tokens[j]?.text !== '[') continue;
      const end = closing(tokens, j);
      const message = scopes.filter((s): s is string => s !== null);
      if (scopes.length > 0 && scopes[scopes.length - 1] !== null) {
        const last = tokens[end];
        const list = source.slice(tokens[j].at, last.at + last.text.length);
        const line = source.slice(0, tokens[i].at).split('\n').length;
        out.push({ message, list, line });
      }
      i = end;
    }
  }
  return out;
}

/** The name of the message (or group) whose body opens at the `{` at `i`, else null. */
function messageName(tokens: readonly Token[], i: number): string | null {
  let k = i - 1;
  if (tokens[k]?.text === ']') {
    let depth = 0;
    for (; k >= 0; k--) {
      if (tokens[k].text === ']') depth++;
      if (tokens[k].text === '[' && --depth === 0) break;
    }
    k--;
  }
  if (tokens[k - 1]?.text === 'message' && tokens[k]?.kind === 'word') return tokens[k].text;
  const group = tokens[k - 3]?.text === 'group' && tokens[k - 1]?.text === '=';
  return group && tokens[k - 2]?.kind === 'word' ? tokens[k - 2].text : null;
}

/** The index of the `]` closing the `[` at `open` (aggregate braces and strings inside). */
function closing(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    if (tokens[k].text === '[') depth++;
    if (tokens[k].text === ']' && --depth === 0) return k;
  }
  return tokens.length - 1;
}
