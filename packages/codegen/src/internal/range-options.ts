import { Root, Type, parse } from 'protobufjs';
import type { Namespace } from 'protobufjs';
import type { DeclaredOptions } from './check-options';
import { blockStatements } from './block-statements';

const EXTENSIONS = new Set(['extensions']);

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
  const out: RangeOptions[] = [];
  for (const { block, messages, tokens } of blockStatements(source, EXTENSIONS)) {
    const open = tokens.findIndex((t) => t.text === '[');
    if (block !== 'message' || open < 0) continue;
    const last = tokens[tokens.length - 1];
    const list = source.slice(tokens[open].at, last.at + last.text.length);
    const line = source.slice(0, tokens[0].at).split('\n').length;
    out.push({ message: [...messages], list, line });
  }
  return out;
}
