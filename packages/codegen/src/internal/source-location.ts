import { Field, Method, Namespace, Service, Type } from 'protobufjs';
import type { ReflectionObject } from 'protobufjs';

/*
 * protobufjs keeps no line numbers on what it parsed, so errors found after parsing (an
 * undefined type, an import cycle) would name only a file. These helpers find the line of the
 * declaration again in the source, so each such error reads `file:line: ...` as protoc's do.
 */

/** `file:line` of the first match of `pattern` in `source`, or `file` when nothing matches. */
export function locationOf(file: string, source: string | undefined, pattern: RegExp): string {
  const match = source === undefined ? null : pattern.exec(source);
  if (match === null || source === undefined) return file;
  return `${file}:${source.slice(0, match.index).split('\n').length}`;
}

/** `file:line` of the statement `import [public|weak] "name"` in `source`. */
export function importLocation(file: string, source: string | undefined, name: string): string {
  return locationOf(
    file,
    source,
    new RegExp(`\\bimport\\s+(?:public\\s+|weak\\s+)?["']${quote(name)}["']`),
  );
}

/**
 * The first field (or extension) or rpc below `ns` whose type does not resolve, with the error
 * protobufjs gives for it; undefined when all resolve.
 */
export function firstUnresolved(ns: Namespace): { obj: Field | Method; error: Error } | undefined {
  for (const nested of ns.nestedArray) {
    const members: ReflectionObject[] =
      nested instanceof Type
        ? nested.fieldsArray
        : nested instanceof Service
          ? nested.methodsArray
          : [nested];
    for (const obj of members) {
      if (!(obj instanceof Field || obj instanceof Method)) continue;
      try {
        obj.resolve();
      } catch (error) {
        return { obj, error: error as Error };
      }
    }
    const deeper = nested instanceof Namespace ? firstUnresolved(nested) : undefined;
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

/** The pattern of the declaration of a field (`name = id`) or an rpc (`rpc Name(`). */
export function declarationPattern(obj: Field | Method): RegExp {
  return obj instanceof Field
    ? new RegExp(`\\b${quote(obj.name)}\\s*=\\s*${obj.id}\\b`)
    : new RegExp(`\\brpc\\s+${quote(obj.name)}\\s*\\(`);
}

function quote(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
