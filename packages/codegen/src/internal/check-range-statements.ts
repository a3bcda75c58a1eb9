import { ProtoParseError } from '../errors';
import { blockStatements } from './block-statements';
import type { BlockStatement, PlacedToken } from './block-statements';
import { locationAt } from './source-location';

/*
 * What protoc refuses in a `reserved` or `extensions` statement and protobufjs's parser reads:
 * names and numbers mixed in one `reserved` list, `max` where a range starts, a message's
 * reserved number 0, an extension number 0 or past 2^29-1, a range that ends before it starts
 * (extensions, enum reserved), an enum's reserved number outside int32, options on `reserved`.
 */

const KEYWORDS = new Set(['reserved', 'extensions']);
const MAX_FIELD_NUMBER = 536870911n;
const [INT32_MIN, INT32_MAX] = [-(2n ** 31n), 2n ** 31n - 1n];

/** One item of a range list: a name, or a number range with its first token. */
type Item =
  | { readonly name: true; readonly token: PlacedToken }
  | {
      readonly name: false;
      readonly token: PlacedToken;
      readonly start: bigint;
      readonly end: bigint;
    };

/**
 * Throws a ProtoParseError (`file:line:column: ...`) at the first range statement of `file`
 * (its `source` as parsed: lines as written) that protoc refuses.
 */
export function checkRangeStatements(file: string, source: string): void {
  // The newer descriptor.proto protobufjs ships, read for options, is no input to check.
  if (file.startsWith('google/protobuf/') || !/\b(?:reserved|extensions)\b/.test(source)) return;
  for (const statement of blockStatements(source, KEYWORDS)) {
    const problem = statementProblem(statement);
    if (problem !== undefined) {
      throw new ProtoParseError(`${locationAt(file, source, problem.at.at)}: ${problem.text}`);
    }
  }
}

function statementProblem(
  statement: BlockStatement,
): { readonly at: PlacedToken; readonly text: string } | undefined {
  const { block, tokens } = statement;
  const keyword = tokens[0].text;
  const options = tokens.find((t) => t.text === '[');
  if (keyword === 'reserved' && options !== undefined) {
    return { at: options, text: 'a reserved statement takes no options (`;` expected)' };
  }
  const items = rangeItems(tokens, block === 'enum' ? INT32_MAX : MAX_FIELD_NUMBER);
  if (items === undefined) return undefined; // protobufjs's parser refuses it already
  if ('max' in items) return { at: items.max, text: '"max" can only end a range (`N to max`)' };
  const first = items[0];
  for (const item of items) {
    if (item.name !== first.name) {
      return {
        at: item.token,
        text: `a ${keyword} statement lists names or numbers, not both (reserve them in two statements)`,
      };
    }
    if (item.name) continue;
    const { start, end } = item;
    const problem =
      block === 'enum'
        ? start < INT32_MIN || end > INT32_MAX
          ? 'reserved enum number out of int32 range'
          : end < start
            ? 'reserved range end number must be greater than start number'
            : undefined
        : keyword === 'reserved'
          ? start <= 0n
            ? 'reserved numbers must be positive integers'
            : undefined
          : start <= 0n
            ? 'extension numbers must be positive integers'
            : end > MAX_FIELD_NUMBER
              ? `extension numbers cannot be greater than ${MAX_FIELD_NUMBER}`
              : end < start
                ? 'extension range end number must be greater than start number'
                : undefined;
    if (problem !== undefined) return { at: item.token, text: problem };
  }
  return undefined;
}

/**
 * The items of the statement `tokens` (keyword first), `max` standing for `max`; `{ max }` when
 * `max` starts a range; undefined when the list does not read as one.
 */
function rangeItems(
  tokens: readonly PlacedToken[],
  max: bigint,
): Item[] | { readonly max: PlacedToken } | undefined {
  const items: Item[] = [];
  let i = 1;
  while (i < tokens.length && tokens[i].text !== '[') {
    const token = tokens[i];
    if (/^["']/.test(token.text)) {
      items.push({ name: true, token });
      while (/^["']/.test(tokens[i]?.text ?? '')) i++; // adjacent literals are one name
    } else {
      if (token.text === 'max') return { max: token };
      const [start, next] = integer(tokens, i);
      if (start === undefined) return undefined;
      i = next;
      let end = start;
      if (tokens[i]?.text === 'to') {
        const [value, after] =
          tokens[i + 1]?.text === 'max' ? [max, i + 2] : integer(tokens, i + 1);
        if (value === undefined) return undefined;
        [end, i] = [value, after];
      }
      items.push({ name: false, token, start, end });
    }
    if (tokens[i]?.text === ',') i++;
    else if (i < tokens.length && tokens[i].text !== '[') return undefined;
  }
  return items;
}

/** The integer (maybe negated) at `i` and the index after it, as protoc reads its token. */
function integer(tokens: readonly PlacedToken[], i: number): [bigint | undefined, number] {
  const negative = tokens[i]?.text === '-';
  const token = tokens[negative ? i + 1 : i];
  if (token?.kind !== 'number') return [undefined, i];
  const text = token.text;
  let value: bigint;
  try {
    value = /^0[xX]/.test(text)
      ? BigInt(text)
      : /^0[0-7]+$/.test(text)
        ? BigInt(`0o${text.slice(1)}`)
        : BigInt(text);
  } catch {
    return [undefined, i]; // not an integer: protobufjs refuses it
  }
  return [negative ? -value : value, (negative ? i + 1 : i) + 1];
}
