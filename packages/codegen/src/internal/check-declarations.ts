import { Enum, Field, Type } from 'protobufjs';
import type { Root } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { unescapeFullName } from './reflection-to-model';
import { declarationLocation, declarationsBelow } from './source-location';
import { unescapeIdentifier } from './proto-source';

/*
 * Rules protoc enforces and protobufjs's parser does not (or only when the field comes after its
 * `reserved` statement). Without them granary-codegen would generate code for files protoc
 * refuses, some of it wrong on the wire: a field number 0 or above 2^29-1 cannot be encoded.
 */

/** The largest field number (the tag keeps 3 bits for the wire type in 32). */
const MAX_FIELD_NUMBER = 536870911;
/** Numbers protobuf keeps for its own implementation. */
const [FIRST_RESERVED, LAST_RESERVED] = [19000, 19999];

/** Throws a ProtoParseError (`file:line: ...`) at the first declaration protoc would refuse. */
export function checkDeclarations(
  root: Root,
  syntaxes: ReadonlyMap<string, string>,
  sources: ReadonlyMap<string, string>,
): void {
  for (const obj of declarationsBelow(root)) {
    if (obj.filename === null || !sources.has(obj.filename)) continue; // a bundled google file
    const proto3 = syntaxes.get(obj.filename) === 'proto3';
    const problem =
      obj instanceof Field
        ? fieldProblem(obj, proto3)
        : obj instanceof Enum
          ? enumProblem(obj, proto3)
          : undefined;
    if (problem !== undefined) {
      const where = declarationLocation(obj, sources, obj.filename);
      const name = unescapeFullName(obj.fullName, unescapeIdentifier);
      throw new ProtoParseError(`${where}: ${name}: ${problem}`);
    }
  }
}

function fieldProblem(f: Field, proto3: boolean): string | undefined {
  if (f.id < 1 || f.id > MAX_FIELD_NUMBER) {
    return `field number ${f.id} is not between 1 and ${MAX_FIELD_NUMBER}`;
  }
  if (f.id >= FIRST_RESERVED && f.id <= LAST_RESERVED) {
    return `field numbers ${FIRST_RESERVED} to ${LAST_RESERVED} are reserved for the protocol buffer library`;
  }
  const owner = f.extend === undefined ? f.parent : null;
  if (owner instanceof Type && owner.isReservedId(f.id)) return `field number ${f.id} is reserved`;
  if (owner instanceof Type && owner.isReservedName(f.name))
    return `field name ${f.name} is reserved`;
  if (proto3 && (f.options as Record<string, unknown> | undefined)?.default !== undefined) {
    return 'explicit [default] values are not allowed in proto3';
  }
  return undefined;
}

function enumProblem(e: Enum, proto3: boolean): string | undefined {
  const first = Object.values(e.values)[0];
  if (proto3 && first !== 0) return 'the first value of a proto3 enum must be zero';
  return undefined;
}
