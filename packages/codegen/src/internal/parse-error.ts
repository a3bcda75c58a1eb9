import type { Root } from 'protobufjs';
import { locationAt, locationOf } from './source-location';

/*
 * protobufjs reports a name declared twice as `duplicate name 'Money' in Namespace .acme.type`,
 * with no line and without the other declaration's file; the same name coming from two paths
 * (an input under `-I .` also imported under `-I protos`) reads the same. This puts both in.
 */

const DUPLICATE = /^duplicate name '([^']+)' in \w+ (\S+)$/;
/** `duplicate id 1 in Enum E`, `id 6 is reserved in Type K`, `name 'A' is reserved in Enum E`. */
const NUMBERED =
  /^(?:duplicate id (\d+)|id (\d+) is reserved|name '(\w+)' is reserved) in (Type|Enum) (\S+)$/;

/**
 * The message of a ProtoParseError for `error`, thrown while parsing `file` (its `source`) into
 * `root`: `file:line:column: "x" is already defined in other.proto` for a duplicate,
 * `file:line:column: ...` for a syntax error (protobufjs's line moved to the front, as protoc
 * writes it), else protobufjs's message after the file name.
 */
export function parseErrorMessage(
  error: Error,
  file: string,
  source: string,
  root: Root,
  sources: ReadonlyMap<string, string> = new Map(),
): string {
  const duplicate = DUPLICATE.exec(error.message);
  const numbered = NUMBERED.exec(error.message);
  if (numbered !== null) {
    const where = numberedLocation(numbered, file, source);
    const elsewhere = where === file ? extensionLocation(numbered, file, source, sources) : where;
    return `${elsewhere}: ${error.message}`;
  }
  if (duplicate === null) {
    // protobufjs ends a syntax error with `(line 5)` or `(file.proto, line 5)`: put it first.
    const line = /^(.*) \((?:.*, )?line (\d+)\)$/s.exec(error.message);
    if (line === null) return `cannot parse ${file}: ${error.message}`;
    return `${syntaxErrorLocation(file, source, Number(line[2]), line[1])}: ${line[1]}`;
  }
  const [, name, scope] = duplicate;
  const scopeName = scope.replace(/^\./, '');
  const fullName = scopeName === '' ? name : `${scopeName}.${name}`;
  const other = root.lookup(`.${fullName}`)?.filename ?? file;
  // A group's field is its name in lower case (`group Foo` is field `foo`).
  const group = `${name[0]?.toUpperCase() ?? ''}${name.slice(1)}`;
  const pattern = new RegExp(
    `\\b(?:message|enum|service|group|rpc|oneof)\\s+${name}\\b|\\bgroup\\s+${group}\\b|\\b${name}\\s*=\\s*\\d`,
  );
  // The first declaration in this file is the duplicate, unless the other one is here too.
  const where = locationOf(file, source, pattern, other === file ? 1 : 0);
  return `${where}: "${fullName}" is already defined in ${other}`;
}

/**
 * `file:line:column` of the declaration a NUMBERED error is about: in the named message or enum, the
 * second declaration with that number (a duplicate) or the first (a reserved one), or the value
 * of that name. Falls back to the number's second use in the file (an extension declared
 * twice, in two `extend` blocks), then to the file alone.
 */
function numberedLocation(match: RegExpExecArray, file: string, source: string): string {
  const [, duplicateId, reservedId, reservedName, kind, scope] = match;
  const name = scope.split('.').pop() ?? scope;
  const block = new RegExp(`\\b${kind === 'Enum' ? 'enum' : '(?:message|group)'}\\s+${name}\\b`);
  const start = block.exec(source)?.index ?? 0;
  const id = duplicateId ?? reservedId;
  const declaration =
    id !== undefined ? new RegExp(`=\\s*${id}\\s*[;\\[]`) : new RegExp(`\\b${reservedName}\\s*=`);
  const nth = duplicateId !== undefined ? 1 : 0;
  const inBlock = locationOf(file, source, declaration, nth, start);
  return inBlock === file ? locationOf(file, source, declaration, nth) : inBlock;
}

/**
 * Where a duplicate extension number is when `file` has not two of it: protobufjs attaches an
 * extension when its extendee's file is parsed, so `duplicate id 50000 in Type
 * .google.protobuf.FieldOptions` may be thrown while parsing descriptor.proto, or in the file of
 * the second extension while the first is in another. The last use of the number in `file`,
 * else in the most recently loaded other file that uses it; else `file` alone.
 */
function extensionLocation(
  match: RegExpExecArray,
  file: string,
  source: string,
  sources: ReadonlyMap<string, string>,
): string {
  const id = match[1];
  if (id === undefined) return file;
  const declaration = new RegExp(`=\\s*${id}\\s*[;\\[]`, 'g');
  const candidates: [string, string][] = [[file, source], ...[...sources].reverse()];
  for (const [name, text] of candidates) {
    const count = [...text.matchAll(declaration)].length;
    if (count > 0) return locationOf(name, text, declaration, count - 1);
  }
  return file;
}

/**
 * `file:line:column` of a protobufjs syntax error (it names the line and the token, `illegal
 * token 'm', '=' expected`): the token's first stand-alone occurrence on that line, else the
 * line's first non-blank character.
 */
function syntaxErrorLocation(file: string, source: string, line: number, message: string): string {
  const lineStart =
    source
      .split('\n')
      .slice(0, line - 1)
      .join('\n').length + (line > 1 ? 1 : 0);
  const text = source.slice(lineStart).split('\n')[0] ?? '';
  const token = /'([^']*)'/.exec(message)?.[1];
  const word = token !== undefined && /^\w+$/.test(token);
  const at =
    token === undefined || token === ''
      ? -1
      : word
        ? text.search(new RegExp(`(?<!\\w)${token}(?!\\w)`))
        : text.indexOf(token);
  const column = at >= 0 ? at : text.length - text.trimStart().length;
  return locationAt(file, source, lineStart + column);
}
