import { Enum, Field, Method, Namespace, Service, Type } from 'protobufjs';

/*
 * protobufjs keeps no line numbers on what it parsed, so errors found after parsing (an
 * undefined type, an import cycle) would name only a file. These helpers find the line of the
 * declaration again in the source, so each such error reads `file:line:column: ...` as protoc's do.
 */

/**
 * `file:line:column` (both from 1) of the match of `pattern` in `source` (the first, or the one
 * at index `nth`, searching from offset `from`), or `file` when there is no such match. Leading
 * whitespace the pattern matched is skipped: the location is where the declaration starts.
 */
export function locationOf(
  file: string,
  source: string | undefined,
  pattern: RegExp,
  nth = 0,
  from = 0,
): string {
  const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
  const match = source === undefined ? undefined : [...source.slice(from).matchAll(global)][nth];
  if (match === undefined || source === undefined) return file;
  const skipped = match[0].length - match[0].trimStart().length;
  return locationAt(file, source, from + match.index + skipped);
}

/** `file:line:column` (both from 1, as protoc writes them) of offset `index` in `source`. */
export function locationAt(file: string, source: string, index: number): string {
  const before = source.slice(0, index);
  const line = before.split('\n').length;
  return `${file}:${line}:${index - before.lastIndexOf('\n')}`;
}

/** `file:line:column` of the statement `import [public|weak] "name"` in `source`. */
export function importLocation(file: string, source: string | undefined, name: string): string {
  return locationOf(
    file,
    source,
    new RegExp(`\\bimport\\s+(?:public\\s+|weak\\s+)?["']${quote(name)}["']`),
  );
}

/**
 * Every field (extensions included, the copies protobufjs adds to the extendee left out), rpc and
 * enum declared below `ns`, in declaration order.
 */
export function declarationsBelow(ns: Namespace): (Field | Method | Enum)[] {
  // One array filled in place: spreading a package's declarations into push() passes each as
  // an argument, and a file of 15000 messages overflowed the stack.
  const out: (Field | Method | Enum)[] = [];
  const walk = (parent: Namespace): void => {
    for (const nested of parent.nestedArray) {
      if (nested instanceof Type) {
        for (const f of nested.fieldsArray) if (f.declaringField === null) out.push(f);
      } else if (nested instanceof Service) {
        for (const m of nested.methodsArray) out.push(m);
      } else if (nested instanceof Field || nested instanceof Enum) {
        out.push(nested);
      }
      if (nested instanceof Namespace) walk(nested);
    }
  };
  walk(ns);
  return out;
}

/**
 * The first field (or extension) or rpc below `ns` whose type does not resolve, with the error
 * protobufjs gives for it; undefined when all resolve.
 */
export function firstUnresolved(ns: Namespace): { obj: Field | Method; error: Error } | undefined {
  for (const obj of declarationsBelow(ns)) {
    if (obj instanceof Enum) continue;
    try {
      obj.resolve();
    } catch (error) {
      return { obj, error: error as Error };
    }
  }
  return undefined;
}

/**
 * The pattern of the declaration of a field (`name = id`), an rpc (`rpc Name(`), an enum or a
 * message (`message Name`, or a group's `group Name`).
 */
export function declarationPattern(obj: Field | Method | Enum | Type): RegExp {
  if (obj instanceof Field) return new RegExp(`\\b${quote(obj.name)}\\s*=\\s*${obj.id}\\b`);
  const keyword =
    obj instanceof Method ? 'rpc' : obj instanceof Enum ? 'enum' : '(?:message|group)';
  return new RegExp(`\\b${keyword}\\s+${quote(obj.name)}\\b`);
}

/** `file:line:column` of the declaration of `obj` (as far as it can be found in its file's source). */
export function declarationLocation(
  obj: Field | Method | Enum | Type,
  sources: ReadonlyMap<string, string>,
  fallback: string,
): string {
  const file = obj.filename ?? fallback;
  return locationOf(file, sources.get(file), declarationPattern(obj));
}

/** `text` with the characters a RegExp gives a meaning escaped. */
export function quote(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
