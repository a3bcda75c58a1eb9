import type {
  EnumModel,
  ExtensionModel,
  FieldModel,
  MessageModel,
  ScalarType,
  TypeRef,
} from '../model/model';
import type { FileScope } from './file-scope';
import { allMessages } from './file-scope';
import { enumMembers, messageMembers } from './member-names';
import { extensionPropertyName, quote, runtimeFullName } from './names';

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

/**
 * Interfaces, enums and codec constants of every message and enum of the file, then the
 * extensions this file adds to messages of other files (as module augmentations).
 */
export function emitTypes(scope: FileScope): string[] {
  const out: string[] = [];
  const messages = allMessages(scope.file.messages);
  const enums = [...scope.file.enums, ...messages.flatMap((m) => m.enums)];
  const extensions = [...scope.file.extensions, ...messages.flatMap((m) => m.extensions)];
  const local = new Set(messages.map((m) => m.fullName));
  for (const message of messages) {
    const own = extensions.filter((e) => e.extendee === message.fullName);
    out.push(...emitMessage(message, own, scope));
  }
  for (const e of enums) out.push(...emitEnum(e, scope));
  out.push(
    ...emitAugmentations(
      extensions.filter((e) => !local.has(e.extendee)),
      scope,
    ),
  );
  return out;
}

function emitMessage(
  message: MessageModel,
  extensions: readonly ExtensionModel[],
  scope: FileScope,
): string[] {
  const name = scope.localName(message.fullName);
  const lines = [`/** Message \`${message.fullName}\`. */`];
  const members = messageMembers(message);
  const fieldProp = (name: string) => members.fields.get(name) ?? name;
  const body: string[] = [];
  for (const oneof of message.oneofs) {
    const prop = members.oneofs.get(oneof) ?? oneof;
    const cases = message.fields
      .filter((f) => f.oneof === oneof)
      .map((f) => quote(fieldProp(f.name)))
      .join(' | ');
    body.push(`  /** Which member of oneof \`${oneof}\` is set (on decoded messages). */`);
    body.push(`  ${prop}?: ${cases === '' ? 'never' : cases};`);
  }
  for (const field of message.fields) {
    const prop = fieldProp(field.name);
    const optional = hasPresence(field, scope.file.syntax) ? '?' : '';
    body.push(`  ${prop}${optional}: ${fieldType(field, scope)};`);
  }
  for (const ext of extensions) body.push(...extensionMember(ext, scope));
  if (body.length === 0 && message.extendable) {
    // Other files may add extension properties to it (module augmentation needs an interface).
    lines.push(`export interface ${name} {}`);
  } else if (body.length === 0) {
    lines.push(`export type ${name} = Record<string, never>;`);
  } else {
    lines.push(`export interface ${name} {`, ...body, '}');
  }
  lines.push(
    `/** Codec of \`${message.fullName}\`, registered with the serialization registry. */`,
    `export const ${name}: $rt.MessageCodec<${name}> = $file.codec(${quote(runtimeFullName(message.fullName))});`,
    '',
  );
  return lines;
}

function emitEnum(e: EnumModel, scope: FileScope): string[] {
  const name = scope.localName(e.fullName);
  const members = enumMembers(e);
  const values = e.values.map((v, i) => `  ${members[i] ?? v.name} = ${v.number},`);
  return [`/** Enum \`${e.fullName}\`. */`, `export enum ${name} {`, ...values, '}', ''];
}

/**
 * Extensions of messages declared in other modules: merged into their interfaces by module
 * augmentation, grouped by module and message.
 */
function emitAugmentations(extensions: readonly ExtensionModel[], scope: FileScope): string[] {
  const byModule = new Map<string, Map<string, ExtensionModel[]>>();
  for (const ext of extensions) {
    const target = scope.augmentationTarget(ext.extendee);
    const messages = byModule.get(target.specifier) ?? new Map<string, ExtensionModel[]>();
    messages.set(target.name, [...(messages.get(target.name) ?? []), ext]);
    byModule.set(target.specifier, messages);
  }
  const out: string[] = [];
  for (const [specifier, messages] of byModule) {
    out.push(`/** Extension fields this file adds to messages of ${specifier}. */`);
    out.push(`declare module ${quote(specifier)} {`);
    for (const [name, exts] of messages) {
      out.push(
        `  interface ${name} {`,
        ...exts.flatMap((e) => extensionMember(e, scope, '  ')),
        '  }',
      );
    }
    out.push('}', '');
  }
  return out;
}

/**
 * An extension as a property of its extendee, named by its full name as protobufjs names it
 * (`'.pkg.name'`); optional like every extension (set on decoded messages only when present).
 */
function extensionMember(ext: ExtensionModel, scope: FileScope, indent = ''): string[] {
  return [
    `${indent}  /** Extension \`${ext.fullName}\` (field ${ext.number}). */`,
    `${indent}  ${quote(extensionPropertyName(ext.fullName, scope.extensionKey(ext)))}?: ${fieldType(ext, scope)};`,
  ];
}

/** Whether a field may be absent: `?` in the interface. */
function hasPresence(field: FieldModel, syntax: 'proto2' | 'proto3'): boolean {
  if (field.label !== 'optional') return false;
  // A proto2 default is what an unset field decodes to: such a field is never absent.
  if (field.defaultValue !== undefined && field.oneof === undefined) return false;
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
