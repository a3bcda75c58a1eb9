import { Enum, Field, Method, Type } from 'protobufjs';
import type { Root } from 'protobufjs';
import { ProtoParseError, UnsupportedProtoError } from '../errors';
import { unescapeFullName } from './reflection-to-model';
import { unescapeIdentifier } from './proto-source';
import { declarationLocation, declarationsBelow } from './source-location';

/*
 * protobufjs resolves a type name against everything loaded, so a file could use a type of
 * another input or of an import's import without importing it. protoc refuses that ("seems to
 * be defined in ..., which is not imported by ..."); so does granary-codegen, or it would
 * generate for files that protoc, and every other protobuf toolchain, does not accept.
 */

/**
 * Throws a ProtoParseError (`file:line:column: ...`) at the first field or rpc that uses a type of a
 * file its own file does not import (directly, or through an import's `import public`), or a
 * proto2 (closed) enum in a proto3 message, as protoc does; an UnsupportedProtoError at one that
 * uses a type of an editions file. `imports`: every loaded file's imports; `sources`: their
 * sources (for `import public`); `syntaxes`: their syntax.
 */
export function checkImports(
  root: Root,
  imports: ReadonlyMap<string, readonly string[]>,
  sources: ReadonlyMap<string, string>,
  syntaxes: ReadonlyMap<string, string>,
): void {
  const visible = new Map<string, Set<string>>();
  for (const obj of declarationsBelow(root)) {
    const file = obj.filename;
    if (file === null || !sources.has(file) || obj instanceof Type) continue;
    let seen = visible.get(file);
    if (seen === undefined) {
      seen = visibleFiles(file, imports, sources);
      visible.set(file, seen);
    }
    for (const used of typesUsed(obj)) {
      const from = used.filename;
      if (from === null) continue;
      // Looked up only for an error: it scans the whole source, once per field would be quadratic.
      const where = (): string => declarationLocation(obj, sources, file);
      const name = unescapeFullName(used.fullName, unescapeIdentifier);
      if (!seen.has(from)) {
        throw new ProtoParseError(
          `${where()}: "${name}" is defined in ${from}, which ${file} does not import`,
        );
      }
      // Its own file would be refused if generated; say so where it is used.
      if (syntaxes.get(from) === 'editions') {
        throw new UnsupportedProtoError(
          `${where()}: "${name}" is defined in ${from}, an editions file; granary-codegen supports proto2 and proto3 files`,
        );
      }
      const closed = used instanceof Enum && syntaxes.get(from) === 'proto2';
      if (
        closed &&
        syntaxes.get(file) === 'proto3' &&
        !(obj instanceof Field && obj.extend !== undefined)
      ) {
        throw new ProtoParseError(
          `${where()}: enum "${name}" of proto2 file ${from} cannot be used in a proto3 message`,
        );
      }
    }
  }
}

/** The file itself, its imports, and what those re-export with `import public`, transitively. */
export function visibleFiles(
  file: string,
  imports: ReadonlyMap<string, readonly string[]>,
  sources: ReadonlyMap<string, string>,
): Set<string> {
  const out = new Set([file]);
  const reexports = (name: string): void => {
    for (const pub of publicImports(sources.get(name) ?? '')) {
      if (out.has(pub)) continue;
      out.add(pub);
      reexports(pub);
    }
  };
  for (const dep of imports.get(file) ?? []) {
    out.add(dep);
    reexports(dep);
  }
  return out;
}

/** The names of a source's `import public "x.proto"` statements. */
function publicImports(source: string): string[] {
  return [...source.matchAll(/\bimport\s+public\s+["']([^"']+)["']/g)].map((m) => m[1]);
}

/** The messages and enums a field (or extension: its extendee too) or an rpc refers to. */
function typesUsed(obj: Field | Method | Enum): (Type | Enum)[] {
  if (obj instanceof Method) {
    return [obj.resolvedRequestType, obj.resolvedResponseType].filter((t) => t !== null);
  }
  if (!(obj instanceof Field)) return [];
  const extendee = obj.extensionField?.parent;
  return [obj.resolvedType, extendee instanceof Type ? extendee : null].filter((t) => t !== null);
}
