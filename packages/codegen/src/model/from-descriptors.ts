import { UnsupportedProtoError } from '../errors';
import { SCALAR_TYPES } from './model';
import type {
  CodegenRequest,
  EnumModel,
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
}

/** DescriptorProto (a message type). */
export interface DescriptorObject {
  name?: string;
  field?: FieldDescriptorObject[];
  nestedType?: DescriptorObject[];
  enumType?: EnumDescriptorObject[];
  oneofDecl?: { name?: string }[];
  options?: { mapEntry?: boolean };
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
  return {
    name,
    package: pkg,
    syntax,
    messages: (file.messageType ?? [])
      .filter((m) => m.options?.mapEntry !== true)
      .map((m) => messageModel(m, pkg, name, maps)),
    enums: (file.enumType ?? []).map((e) => enumModel(e, pkg)),
    services: (file.service ?? []).map((s) => serviceModel(s, pkg)),
  };
}

function messageModel(
  m: DescriptorObject,
  scope: string,
  fileName: string,
  maps: MapEntries,
): MessageModel {
  const fullName = join(scope, m.name);
  const fields = m.field ?? [];
  const decls = m.oneofDecl ?? [];
  const isReal = (i: number) => fields.some((f) => f.oneofIndex === i && f.proto3Optional !== true);
  return {
    name: m.name ?? '',
    fullName,
    fields: fields.map((f) => fieldModel(f, decls, fullName, fileName, maps)),
    oneofs: decls.filter((_d, i) => isReal(i)).map((d) => d.name ?? ''),
    messages: (m.nestedType ?? [])
      .filter((n) => n.options?.mapEntry !== true)
      .map((n) => messageModel(n, fullName, fileName, maps)),
    enums: (m.enumType ?? []).map((e) => enumModel(e, fullName)),
  };
}

function fieldModel(
  f: FieldDescriptorObject,
  decls: { name?: string }[],
  owner: string,
  fileName: string,
  maps: MapEntries,
): FieldModel {
  const proto3Optional = f.proto3Optional === true;
  const oneof =
    f.oneofIndex !== undefined && !proto3Optional ? (decls[f.oneofIndex]?.name ?? '') : undefined;
  const base = { name: f.name ?? '', number: f.number ?? 0, proto3Optional, oneof };
  const entry = f.type === 'TYPE_MESSAGE' ? maps.get(strip(f.typeName)) : undefined;
  if (entry !== undefined) {
    const [key, value] = [entry.field?.[0], entry.field?.[1]];
    const keyType = typeRef(key ?? {}, owner, fileName);
    if (keyType.kind !== 'scalar') {
      throw new UnsupportedProtoError(
        `map key of ${owner}.${f.name} in ${fileName} is not a scalar`,
      );
    }
    return {
      ...base,
      label: 'map',
      mapKey: keyType.scalar,
      type: typeRef(value ?? {}, owner, fileName),
    };
  }
  const label =
    f.label === 'LABEL_REPEATED'
      ? 'repeated'
      : f.label === 'LABEL_REQUIRED'
        ? 'required'
        : 'optional';
  return { ...base, label, type: typeRef(f, owner, fileName) };
}

function typeRef(f: FieldDescriptorObject, owner: string, fileName: string): TypeRef {
  if (f.type === 'TYPE_MESSAGE') return { kind: 'message', fullName: strip(f.typeName) };
  if (f.type === 'TYPE_ENUM') return { kind: 'enum', fullName: strip(f.typeName) };
  const scalar = (f.type ?? '').replace(/^TYPE_/, '').toLowerCase() as ScalarType;
  if (!SCALAR_TYPES.includes(scalar)) {
    throw new UnsupportedProtoError(
      `field ${owner}.${f.name} in ${fileName} has type ${f.type}; groups are not supported, use a message field`,
    );
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
