import type {
  EnumModel,
  ExtensionModel,
  FieldModel,
  FileModel,
  MessageModel,
} from '../model/model';
import { syntheticOneofNames } from '../model/synthetic-oneofs';
import { LENGTH_PREFIXED_OPTION } from '../runtime/length-prefixed';
import { extensionKeys, messageMembers } from './member-names';
import { runtimeFullName, runtimeName } from './names';

/** A protobufjs JSON namespace (what `Root.addJSON` takes). */
type JsonNamespace = Record<string, unknown>;

/**
 * The protobufjs JSON descriptor of a file's own messages, enums and extensions, embedded in
 * the generated module so no .proto is read at run time. Field and oneof names are the
 * TypeScript property names; types are fully qualified (`.pkg.Msg`), so references resolve from
 * any module; names go through `runtimeName` (protobufjs cannot hold `__proto__`).
 */
export function descriptorOf(file: FileModel): JsonNamespace {
  const keys = extensionKeys(file);
  let nested: JsonNamespace = typesOf(
    file.messages,
    file.enums,
    file.extensions,
    file.syntax,
    keys,
  );
  const parts = file.package === '' ? [] : file.package.split('.');
  for (const part of parts.reverse()) nested = { [runtimeName(part)]: { nested } };
  return nested;
}

function typesOf(
  messages: readonly MessageModel[],
  enums: readonly EnumModel[],
  extensions: readonly ExtensionModel[],
  edition: string,
  keys: ReadonlyMap<ExtensionModel, string>,
): JsonNamespace {
  const out: JsonNamespace = {};
  const groups = groupNames(messages);
  for (const message of messages) {
    out[runtimeName(message.name)] = messageJson(message, edition, keys);
  }
  for (const e of enums) out[runtimeName(e.name)] = enumJson(e, edition);
  // protobufjs adds each to its extendee as a field named by its full name ('.pkg.name'); the
  // edition makes it read `packed` as the .proto's syntax does.
  for (const ext of extensions) {
    const extend = `.${runtimeFullName(ext.extendee)}`;
    out[keys.get(ext) ?? ext.name] = { edition, ...fieldJson(ext, groups), extend };
  }
  return out;
}

function messageJson(
  message: MessageModel,
  edition: string,
  keys: ReadonlyMap<ExtensionModel, string>,
): JsonNamespace {
  const fields: JsonNamespace = {};
  const oneofs: Record<string, { oneof: string[] }> = {};
  const members = messageMembers(message);
  const prop = (names: ReadonlyMap<string, string>, name: string) => names.get(name) ?? name;
  for (const name of message.oneofs) oneofs[prop(members.oneofs, name)] = { oneof: [] };
  const groups = groupNames(message.messages);
  for (const field of message.fields) {
    const name = prop(members.fields, field.name);
    fields[name] = fieldJson(field, groups);
    if (field.oneof !== undefined) oneofs[prop(members.oneofs, field.oneof)].oneof.push(name);
  }
  // protobufjs models proto3 `optional` as a synthetic one-member oneof, like protoc does, and
  // by protoc's name; one more `X` if a property (a camelCased name) already has it.
  for (const [field, synthetic] of syntheticOneofNames(message.fields, message.oneofs)) {
    let key = synthetic;
    while (Object.hasOwn(fields, key) || Object.hasOwn(oneofs, key)) key = `X${key}`;
    oneofs[key] = { oneof: [prop(members.fields, field)] };
  }
  const json: JsonNamespace = { edition, fields };
  if (Object.keys(oneofs).length > 0) json.oneofs = oneofs;
  if (message.messages.length + message.enums.length + message.extensions.length > 0) {
    json.nested = typesOf(message.messages, message.enums, message.extensions, edition, keys);
  }
  if (message.group) json.group = true;
  return json;
}

/** The runtime names of the group types among `messages`. */
function groupNames(messages: readonly MessageModel[]): ReadonlySet<string> {
  return new Set(messages.filter((m) => m.group).map((m) => runtimeName(m.name)));
}

/**
 * `groups`: the group types declared beside the field. protobufjs encodes a message field as a
 * group when its scope has a group named as the last part of the field's type, also when the
 * field was not declared as that group (`optional Grp copy = 2` beside `group Grp = 1`): such a
 * field is marked, and the runtime sets it back to length-prefixed, as protoc encodes it.
 */
function fieldJson(field: FieldModel, groups: ReadonlySet<string>): JsonNamespace {
  const json: JsonNamespace = {};
  if (field.label === 'repeated' || field.label === 'required') json.rule = field.label;
  if (field.label === 'map') json.keyType = field.mapKey;
  json.type =
    field.type.kind === 'scalar' ? field.type.scalar : `.${runtimeFullName(field.type.fullName)}`;
  json.id = field.number;
  const options: JsonNamespace = {};
  if (field.proto3Optional) options.proto3_optional = true;
  const last = field.type.kind === 'message' ? field.type.fullName.split('.').pop() : undefined;
  if (field.group !== true && last !== undefined && groups.has(runtimeName(last))) {
    options[LENGTH_PREFIXED_OPTION] = true;
  }
  if (field.packed !== undefined) options.packed = field.packed;
  if (field.defaultValue !== undefined) {
    // Enum defaults are value names, which go through runtimeName like the enum's own values.
    options.default =
      field.type.kind === 'enum' ? runtimeName(String(field.defaultValue)) : field.defaultValue;
  }
  if (Object.keys(options).length > 0) json.options = options;
  return json;
}

function enumJson(e: EnumModel, edition: string): JsonNamespace {
  const values: Record<string, number> = {};
  for (const v of e.values) values[runtimeName(v.name)] = v.number;
  return { edition, values };
}
