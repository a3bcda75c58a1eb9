import { UnsupportedProtoError } from '../errors';
import { defaultFromProtoc } from './defaults';
import { SCALAR_TYPES, isOptionExtendee, refuseMessageSet } from './model';
import type {
  CodegenRequest,
  EnumModel,
  ExtensionModel,
  FieldModel,
  FileModel,
  MessageModel,
  MethodModel,
  ScalarType,
  ServiceModel,
  TypeLocation,
  TypeRef,
} from './model';

/**
 * FileDescriptorProto as protobufjs decodes it with `toObject({ enums: String, longs: String })`
 * (camelCase names, enums as their names); only the members the model reads.
 */
export interface FileDescriptorObject {
  name?: string;
  package?: string;
  syntax?: string;
  messageType?: DescriptorObject[];
  enumType?: EnumDescriptorObject[];
  service?: ServiceDescriptorObject[];
  extension?: FieldDescriptorObject[];
  /** Where each declaration is (protoc sends it for the files to generate). */
  sourceCodeInfo?: { location?: { path?: number[]; span?: number[] }[] };
}

/** DescriptorProto (a message type). */
export interface DescriptorObject {
  name?: string;
  field?: FieldDescriptorObject[];
  nestedType?: DescriptorObject[];
  enumType?: EnumDescriptorObject[];
  oneofDecl?: { name?: string }[];
  options?: { mapEntry?: boolean; messageSetWireFormat?: boolean };
  extension?: FieldDescriptorObject[];
  extensionRange?: unknown[];
}

/** FieldDescriptorProto. */
export interface FieldDescriptorObject {
  name?: string;
  number?: number;
  label?: string;
  type?: string;
  typeName?: string;
  oneofIndex?: number;
  proto3Optional?: boolean;
  defaultValue?: string;
  extendee?: string;
  options?: { packed?: boolean };
}

/** EnumDescriptorProto. */
export interface EnumDescriptorObject {
  name?: string;
  value?: { name?: string; number?: number }[];
}

/** ServiceDescriptorProto. */
export interface ServiceDescriptorObject {
  name?: string;
  method?: {
    name?: string;
    inputType?: string;
    outputType?: string;
    clientStreaming?: boolean;
    serverStreaming?: boolean;
  }[];
}

/** Map entry types by full name: the key and value fields of each `map<K, V>`. */
type MapEntries = Map<string, DescriptorObject>;

/**
 * Builds the model from protoc's descriptors: `files` is CodeGeneratorRequest.proto_file (every
 * file, dependencies first), `toGenerate` its file_to_generate.
 */
export function modelFromDescriptors(
  files: readonly FileDescriptorObject[],
  toGenerate: readonly string[],
): CodegenRequest {
  const types = new Map<string, TypeLocation>();
  const mapEntries: MapEntries = new Map();
  for (const file of files) indexFile(file, types, mapEntries);
  const byName = new Map(files.map((f) => [f.name ?? '', f]));
  return {
    types,
    files: toGenerate.map((name) => {
      const file = byName.get(name);
      if (file === undefined) {
        throw new UnsupportedProtoError(`file_to_generate ${name} has no descriptor in proto_file`);
      }
      return fileModel(file, mapEntries);
    }),
  };
}

function indexFile(file: FileDescriptorObject, types: Map<string, TypeLocation>, maps: MapEntries) {
  const pkg = file.package ?? '';
  const location = (fullName: string, kind: 'message' | 'enum') =>
    types.set(fullName, { fullName, kind, file: file.name ?? '', package: pkg });
  const walk = (messages: DescriptorObject[] | undefined, scope: string) => {
    for (const m of messages ?? []) {
      const fullName = join(scope, m.name);
      if (m.options?.mapEntry === true) {
        maps.set(fullName, m);
        continue;
      }
      location(fullName, 'message');
      for (const e of m.enumType ?? []) location(join(fullName, e.name), 'enum');
      walk(m.nestedType, fullName);
    }
  };
  for (const e of file.enumType ?? []) location(join(pkg, e.name), 'enum');
  walk(file.messageType, pkg);
}

function fileModel(file: FileDescriptorObject, maps: MapEntries): FileModel {
  const name = file.name ?? '';
  const syntax = file.syntax === undefined || file.syntax === '' ? 'proto2' : file.syntax;
  if (syntax !== 'proto2' && syntax !== 'proto3') {
    throw new UnsupportedProtoError(
      `${name} uses syntax "${syntax}"; protoc-gen-granary supports proto2 and proto3 files`,
    );
  }
  const pkg = file.package ?? '';
  refuseMessageSets(file, pkg);
  const ctx: Ctx = { fileName: name, maps };
  const groups = groupTypes(file.extension ?? []);
  return {
    name,
    package: pkg,
    syntax,
    messages: (file.messageType ?? [])
      .filter((m) => m.options?.mapEntry !== true)
      .map((m) => messageModel(m, pkg, ctx, groups.has(join(pkg, m.name)))),
    enums: (file.enumType ?? []).map((e) => enumModel(e, pkg)),
    services: (file.service ?? []).map((s) => serviceModel(s, pkg)),
    extensions: extensionModels(file.extension, pkg, ctx),
  };
}

/**
 * Refuses a MessageSet of `file` at its `option message_set_wire_format` (source path
 * message_type / nested_type ..., options = 7, message_set_wire_format = 1), as granary-codegen
 * names it.
 */
function refuseMessageSets(file: FileDescriptorObject, pkg: string): void {
  const spans = new Map(
    (file.sourceCodeInfo?.location ?? []).map((l) => [(l.path ?? []).join(','), l.span ?? []]),
  );
  const walk = (messages: readonly DescriptorObject[], scope: string, path: number[]): void => {
    messages.forEach((m, i) => {
      const at = [...path, i];
      const span = spans.get([...at, 7, 1].join(',')) ?? spans.get(at.join(','));
      const name = file.name ?? '';
      const where = span === undefined ? name : `${name}:${span[0] + 1}:${span[1] + 1}`;
      refuseMessageSet(join(scope, m.name), where, m.options?.messageSetWireFormat);
      walk(m.nestedType ?? [], join(scope, m.name), [...at, 3]);
    });
  };
  walk(file.messageType ?? [], pkg, [4]);
}

/** What every field of one file needs to know. */
interface Ctx {
  readonly fileName: string;
  readonly maps: MapEntries;
}

function messageModel(m: DescriptorObject, scope: string, ctx: Ctx, group: boolean): MessageModel {
  const fullName = join(scope, m.name);
  refuseMessageSet(fullName, ctx.fileName, m.options?.messageSetWireFormat);
  const fields = m.field ?? [];
  const decls = m.oneofDecl ?? [];
  const isReal = (i: number) => fields.some((f) => f.oneofIndex === i && f.proto3Optional !== true);
  const groups = groupTypes([...fields, ...(m.extension ?? [])]);
  return {
    name: m.name ?? '',
    fullName,
    fields: fields.map((f) => fieldModel(f, decls, fullName, ctx)),
    oneofs: decls.filter((_d, i) => isReal(i)).map((d) => d.name ?? ''),
    messages: (m.nestedType ?? [])
      .filter((n) => n.options?.mapEntry !== true)
      .map((n) => messageModel(n, fullName, ctx, groups.has(join(fullName, n.name)))),
    enums: (m.enumType ?? []).map((e) => enumModel(e, fullName)),
    extensions: extensionModels(m.extension, fullName, ctx),
    extendable: (m.extensionRange ?? []).length > 0,
    group,
  };
}

/**
 * The full names of the group types among `fields`. A group's type is declared beside the field,
 * also when the field is an extension (`extend Base { optional group G = 100 {...} }` declares
 * message G in the same scope as the extension), so extensions count too.
 */
function groupTypes(fields: readonly FieldDescriptorObject[]): Set<string> {
  return new Set(fields.filter((f) => f.type === 'TYPE_GROUP').map((f) => strip(f.typeName)));
}

/** Extensions declared in `scope`, leaving out descriptor options (`extend google.protobuf.*`). */
function extensionModels(
  fields: FieldDescriptorObject[] | undefined,
  scope: string,
  ctx: Ctx,
): ExtensionModel[] {
  return (fields ?? [])
    .filter((f) => !isOptionExtendee(strip(f.extendee)))
    .map((f) => ({
      ...fieldModel(f, [], scope, ctx),
      fullName: join(scope, f.name),
      extendee: strip(f.extendee),
    }));
}

function fieldModel(
  f: FieldDescriptorObject,
  decls: { name?: string }[],
  owner: string,
  ctx: Ctx,
): FieldModel {
  const proto3Optional = f.proto3Optional === true;
  const oneof =
    f.oneofIndex !== undefined && !proto3Optional ? (decls[f.oneofIndex]?.name ?? '') : undefined;
  const where = `${owner}.${f.name ?? ''} in ${ctx.fileName}`;
  const base = { name: f.name ?? '', number: f.number ?? 0, proto3Optional, oneof };
  const entry = f.type === 'TYPE_MESSAGE' ? ctx.maps.get(strip(f.typeName)) : undefined;
  if (entry !== undefined) {
    const [key, value] = [entry.field?.[0], entry.field?.[1]];
    const keyType = typeRef(key ?? {}, where);
    if (keyType.kind !== 'scalar')
      throw new UnsupportedProtoError(`map key of ${where} is not a scalar`);
    return { ...base, label: 'map', mapKey: keyType.scalar, type: typeRef(value ?? {}, where) };
  }
  const label =
    f.label === 'LABEL_REPEATED'
      ? 'repeated'
      : f.label === 'LABEL_REQUIRED'
        ? 'required'
        : 'optional';
  const type = typeRef(f, where);
  const model: { -readonly [K in keyof FieldModel]: FieldModel[K] } = { ...base, label, type };
  if (f.options?.packed !== undefined) model.packed = f.options.packed;
  if (f.defaultValue !== undefined)
    model.defaultValue = defaultFromProtoc(f.defaultValue, type, where);
  if (f.type === 'TYPE_GROUP') model.group = true;
  return model;
}

function typeRef(f: FieldDescriptorObject, where: string): TypeRef {
  if (f.type === 'TYPE_MESSAGE' || f.type === 'TYPE_GROUP') {
    return { kind: 'message', fullName: strip(f.typeName) };
  }
  if (f.type === 'TYPE_ENUM') return { kind: 'enum', fullName: strip(f.typeName) };
  const scalar = (f.type ?? '').replace(/^TYPE_/, '').toLowerCase() as ScalarType;
  if (!SCALAR_TYPES.includes(scalar)) {
    throw new UnsupportedProtoError(`field ${where} has type ${f.type}, which is not supported`);
  }
  return { kind: 'scalar', scalar };
}
function enumModel(e: EnumDescriptorObject, scope: string): EnumModel {
  return {
    name: e.name ?? '',
    fullName: join(scope, e.name),
    values: (e.value ?? []).map((v) => ({ name: v.name ?? '', number: v.number ?? 0 })),
  };
}

function serviceModel(s: ServiceDescriptorObject, pkg: string): ServiceModel {
  return {
    name: s.name ?? '',
    fullName: join(pkg, s.name),
    methods: (s.method ?? []).map((m): MethodModel => ({
      name: m.name ?? '',
      inputType: strip(m.inputType),
      outputType: strip(m.outputType),
      clientStreaming: m.clientStreaming === true,
      serverStreaming: m.serverStreaming === true,
    })),
  };
}

function join(scope: string, name: string | undefined): string {
  return scope === '' ? (name ?? '') : `${scope}.${name ?? ''}`;
}

/** `.pkg.Msg` → `pkg.Msg`. */
function strip(typeName: string | undefined): string {
  return (typeName ?? '').replace(/^\./, '');
}
