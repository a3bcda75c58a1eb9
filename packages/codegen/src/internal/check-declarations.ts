import { Enum, Field, Namespace, Type } from 'protobufjs';
import type { Method, Root } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { fieldOptionProblem } from './check-field-options';
import { declaredGroup, unescapeFullName } from './reflection-to-model';
import { messageRangeProblem } from './check-ranges';
import { EnumValueScopes, mapEntryProblem } from './scope-symbols';
import { declarationLocation, declarationsBelow, locationOf, quote } from './source-location';
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

/** Throws a ProtoParseError (`file:line:column: ...`) at the first declaration protoc would refuse. */
export function checkDeclarations(
  root: Root,
  syntaxes: ReadonlyMap<string, string>,
  sources: ReadonlyMap<string, string>,
): void {
  const enumValues = new EnumValueScopes();
  for (const obj of declarationsBelow(root)) {
    if (obj.filename === null || !sources.has(obj.filename)) continue; // a bundled google file
    const proto3 = syntaxes.get(obj.filename) === 'proto3';
    const problem: string | undefined =
      obj instanceof Field
        ? fieldProblem(obj, proto3)
        : obj instanceof Enum
          ? (enumProblem(obj, proto3) ?? enumValues.add(obj))
          : undefined;
    if (problem !== undefined) throw located(obj, problem, sources);
    const written =
      obj instanceof Field ? writtenProblem(obj, sources.get(obj.filename), proto3) : undefined;
    if (written !== undefined) throw located(obj, written.problem, sources, written.at);
  }
  for (const type of typesBelow(root)) {
    if (type.filename === null || !sources.has(type.filename)) continue;
    const proto3 = syntaxes.get(type.filename) === 'proto3';
    const problem =
      proto3 && (type.extensions?.length ?? 0) > 0
        ? 'extension ranges are not allowed in proto3'
        : (messageRangeProblem(type) ?? mapEntryProblem(type));
    if (problem !== undefined) throw located(type, problem, sources);
    const conflict = proto3 ? jsonNameConflict(type) : undefined;
    if (conflict !== undefined) throw located(conflict.field, conflict.problem, sources);
  }
}

/**
 * protoc (3.21) refuses two fields of a proto3 message whose names are one once lower-cased
 * without underscores (`foo_bar` and `fooBar`, `to_string` and `toString_`): their JSON names
 * would clash. The error is at the later field, as protoc's.
 */
function jsonNameConflict(type: Type): { field: Field; problem: string } | undefined {
  const seen = new Map<string, string>();
  for (const f of type.fieldsArray) {
    if (f.declaringField !== null) continue; // an extension's copy in its extendee
    const name = unescapeIdentifier(f.name);
    const key = name.toLowerCase().replace(/_/g, '');
    const other = seen.get(key);
    if (other !== undefined) {
      return {
        field: f,
        problem: `the JSON camel-case name of field "${name}" conflicts with field "${other}"; this is not allowed in proto3`,
      };
    }
    seen.set(key, name);
  }
  return undefined;
}

/** The error for `obj`, at its declaration (or at the match of `at`) in its file. */
function located(
  obj: Field | Method | Enum | Type,
  problem: string,
  sources: ReadonlyMap<string, string>,
  at?: RegExp,
): ProtoParseError {
  const file = obj.filename ?? '';
  const where =
    at === undefined
      ? declarationLocation(obj, sources, file)
      : locationOf(file, sources.get(file), at);
  const name = unescapeFullName(obj.fullName, unescapeIdentifier);
  return new ProtoParseError(`${where}: ${name}: ${problem}`);
}

/**
 * What protobufjs's parser reads and forgets, found in the source (`at`: where): a field
 * numbered `max` (it takes the largest number; protoc allows `max` only in ranges), a group
 * named in lower case (it capitalizes the name; protoc refuses it) and a group in a proto3 file.
 */
function writtenProblem(
  f: Field,
  source: string | undefined,
  proto3: boolean,
): { problem: string; at: RegExp } | undefined {
  if (source === undefined) return undefined;
  const name = quote(f.name);
  const max = new RegExp(`\\b${name}\\s*=\\s*max\\b`);
  if (f.id === MAX_FIELD_NUMBER && max.test(source)) {
    return {
      problem: '"max" is not a field number (it ends a range: reserved or extensions N to max)',
      at: max,
    };
  }
  const group = declaredGroup(f);
  if (proto3 && group !== undefined) {
    const at = new RegExp(`\\bgroup\\s+${quote(group.name)}\\s*=`);
    return { problem: 'groups are not supported in proto3 syntax', at };
  }
  // Its type is part of the match: another message may declare a field of the same name and
  // number whose [default] is a word (an enum value), and this field's need not have one.
  const floatDefault =
    f.type === 'float' || f.type === 'double'
      ? new RegExp(
          `\\b${f.type}(?:\\s|/\\*[\\s\\S]*?\\*/|//[^\\n]*\\n)+${name}\\s*=\\s*${f.id}\\b` +
            `[^;]*?[[,]\\s*default\\s*=\\s*-?\\s*(\\.(?![\\w.])|[A-Za-z_]\\w*)`,
        )
      : undefined;
  const word = floatDefault?.exec(source)?.[1];
  // protoc reads a float default as a number, `inf` or `nan`; protobufjs also `Inf`, `NaN`, `.`.
  if (floatDefault !== undefined && word !== undefined && word !== 'inf' && word !== 'nan') {
    return { problem: `[default] ${word} is not a number (write inf or nan)`, at: floatDefault };
  }
  const lowerGroup = new RegExp(`\\bgroup\\s+${name}\\s*=`);
  if (group !== undefined && /^[a-z]/.test(f.name) && lowerGroup.test(source)) {
    return { problem: 'group names must start with a capital letter', at: lowerGroup };
  }
  return undefined;
}

/** Every message type below `ns`, nested ones included. */
function typesBelow(ns: Namespace): Type[] {
  return ns.nestedArray.flatMap((n) => [
    ...(n instanceof Type ? [n] : []),
    ...(n instanceof Namespace ? typesBelow(n) : []),
  ]);
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
  const extendee = f.extend === undefined ? null : f.extensionField?.parent;
  if (extendee instanceof Type && !inRanges(extendee.extensions ?? [], f.id)) {
    return `${strip(extendee.fullName)} does not declare ${f.id} as an extension number`;
  }
  if (proto3 && (f.options as Record<string, unknown> | undefined)?.default !== undefined) {
    return 'explicit [default] values are not allowed in proto3';
  }
  return fieldOptionProblem(f);
}

function enumProblem(e: Enum, proto3: boolean): string | undefined {
  const first = Object.values(e.values)[0];
  if (proto3 && first !== 0) return 'the first value of a proto3 enum must be zero';
  const [name, value] = Object.entries(e.values).find(([, v]) => v !== (v | 0)) ?? [];
  if (name !== undefined) return `value ${name} = ${value} is out of range (enum values are int32)`;
  const numbers = Object.values(e.values);
  if (e.options?.['allow_alias'] === true && new Set(numbers).size === numbers.length) {
    return "declares support for enum aliases but no enum values share field numbers: remove the unnecessary 'option allow_alias = true;'";
  }
  return undefined;
}

function inRanges(ranges: readonly number[][], id: number): boolean {
  return ranges.some(([start, end]) => id >= start && id <= end);
}

function strip(fullName: string): string {
  return unescapeFullName(fullName, unescapeIdentifier);
}
