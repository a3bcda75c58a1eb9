import { NameClashError } from '../errors';
import type { EnumModel, FieldModel, MessageModel, ScalarType, TypeRef } from '../model/model';
import type { FileScope } from './file-scope';
import { allMessages } from './file-scope';
import { propertyName, quote } from './names';

/**
 * The TypeScript type of each scalar. 64-bit integers are decimal strings: exact for the
 * whole range, JSON-safe, and what protobufjs's `longs: String` produces.
 */
const SCALAR_TS: Record<ScalarType, string> = {
  double: 'number',
  float: 'number',
  int32: 'number',
  uint32: 'number',
  sint32: 'number',
  fixed32: 'number',
  sfixed32: 'number',
  int64: 'string',
  uint64: 'string',
  sint64: 'string',
  fixed64: 'string',
  sfixed64: 'string',
  bool: 'boolean',
  string: 'string',
  bytes: 'Uint8Array',
};

/** Interfaces, enums and codec constants of every message and enum of the file. */
export function emitTypes(scope: FileScope): string[] {
  const out: string[] = [];
  const messages = allMessages(scope.file.messages);
  const enums = [...scope.file.enums, ...messages.flatMap((m) => m.enums)];
  for (const message of messages) out.push(...emitMessage(message, scope));
  for (const e of enums) out.push(...emitEnum(e, scope));
  return out;
}

function emitMessage(message: MessageModel, scope: FileScope): string[] {
  const name = scope.declare(scope.localName(message.fullName), `message ${message.fullName}`);
  const lines = [`/** Message \`${message.fullName}\`. */`];
  const members = new Set<string>();
  const member = (prop: string, what: string) => {
    if (members.has(prop)) {
      throw new NameClashError(
        `${what} of ${message.fullName} in ${scope.file.name} clashes with another member named ${prop}`,
      );
    }
    members.add(prop);
    return prop;
  };
  const body: string[] = [];
  for (const oneof of message.oneofs) {
    const prop = member(propertyName(oneof), `oneof ${oneof}`);
    const cases = message.fields
      .filter((f) => f.oneof === oneof)
      .map((f) => quote(propertyName(f.name)))
      .join(' | ');
    body.push(`  /** Which member of oneof \`${oneof}\` is set (on decoded messages). */`);
    body.push(`  ${prop}?: ${cases === '' ? 'never' : cases};`);
  }
  for (const field of message.fields) {
    const prop = member(propertyName(field.name), `field ${field.name}`);
    const optional = hasPresence(field, scope.file.syntax) ? '?' : '';
    body.push(`  ${prop}${optional}: ${fieldType(field, scope)};`);
  }
  if (body.length === 0) {
    lines.push(`export type ${name} = Record<string, never>;`);
  } else {
    lines.push(`export interface ${name} {`, ...body, '}');
  }
  lines.push(
    `/** Codec of \`${message.fullName}\`, registered with the serialization registry. */`,
    `export const ${name}: $rt.MessageCodec<${name}> = $file.codec(${quote(message.fullName)});`,
    '',
  );
  return lines;
}

function emitEnum(e: EnumModel, scope: FileScope): string[] {
  const name = scope.declare(scope.localName(e.fullName), `enum ${e.fullName}`);
  return [
    `/** Enum \`${e.fullName}\`. */`,
    `export enum ${name} {`,
    ...e.values.map((v) => `  ${v.name} = ${v.number},`),
    '}',
    '',
  ];
}

/** Whether a field may be absent: `?` in the interface. */
function hasPresence(field: FieldModel, syntax: 'proto2' | 'proto3'): boolean {
  if (field.label !== 'optional') return false;
  return (
    field.type.kind === 'message' ||
    field.proto3Optional ||
    field.oneof !== undefined ||
    syntax === 'proto2'
  );
}

function fieldType(field: FieldModel, scope: FileScope): string {
  const value = typeRef(field.type, scope);
  if (field.label === 'repeated') return `${value}[]`;
  if (field.label === 'map') return `{ [key: string]: ${value} }`;
  return value;
}

function typeRef(type: TypeRef, scope: FileScope): string {
  return type.kind === 'scalar' ? SCALAR_TS[type.scalar] : scope.typeRef(type.fullName);
}
