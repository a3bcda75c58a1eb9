import { rewriteCode, skipEnd } from './proto-source';

/*
 * An option's aggregate value (`option (x) = { ... };`) is protobuf text format, which protoc
 * reads in full and protobufjs only in part: it refuses `#` comments and `<` `>` around a
 * message value (`route < get: "/v1" >`), both valid there. granary-codegen leaves options out
 * of the generated code, so before parsing it rewrites those two into what protobufjs reads
 * (`{` `}`, the comment blanked); nothing outside aggregate values changes.
 */

/** `source` with each aggregate option value in the text format protobufjs reads. */
export function normalizeAggregates(source: string): string {
  // Any '<' may be in an aggregate (after a nested `}` too); most files have none, or only maps.
  if (!source.includes('#') && !source.includes('<')) return source;
  return rewriteCode(source, (i) => {
    if (source[i] !== '=' || !/^=\s*\{/.test(source.slice(i, i + 200))) return undefined;
    const open = source.indexOf('{', i);
    const close = aggregateEnd(source, open);
    return { text: source.slice(i, open) + rewrite(source.slice(open, close)), end: close };
  });
}

/** Where the aggregate value opening at `open` (its `{`) ends, past its closing brace. */
function aggregateEnd(source: string, open: number): number {
  let depth = 0;
  let i = open;
  while (i < source.length) {
    const end = skipEnd(source, i);
    if (end > i) {
      i = end;
      continue;
    }
    const c = source[i];
    if (c === '#') i = source.indexOf('\n', i) < 0 ? source.length : source.indexOf('\n', i);
    else {
      if (c === '{' || c === '<') depth++;
      if ((c === '}' || c === '>') && --depth === 0) return i + 1;
      i++;
    }
  }
  return source.length;
}

/** One aggregate value: `<` `>` as braces, `#` comments blanked (lines kept for errors). */
function rewrite(aggregate: string): string {
  return rewriteCode(aggregate, (i) => {
    const c = aggregate[i];
    if (c === '<' || c === '>') return { text: c === '<' ? '{' : '}', end: i + 1 };
    if (c !== '#') return undefined;
    const nl = aggregate.indexOf('\n', i);
    const stop = nl < 0 ? aggregate.length : nl;
    return { text: ' '.repeat(stop - i), end: stop };
  });
}
