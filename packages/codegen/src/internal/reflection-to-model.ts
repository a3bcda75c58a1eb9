import { Enum, Field, MapField, type Service, Type } from 'protobufjs';
import type { ReflectionObject } from 'protobufjs';
import { UnsupportedProtoError } from '../errors';
import { defaultFromProtobufjs } from '../model/defaults';
import { integerTokenValue, rawDefaultToken } from './raw-option-values';
import { SCALAR_TYPES, isOptionExtendee, refuseMessageSet } from '../model/model';
import type {
  EnumModel,
  ExtensionModel,
  FieldModel,
  MessageModel,
  ScalarType,
  ServiceModel,
  TypeRef,
} from '../model/model';

/*
 * protobufjs reflection objects (parsed with keepCase) -> the intermediate model, for
 * granary-codegen. Kept in the same shape and order as model/from-descriptors.ts produces
 * from protoc's descriptors, so both commands generate the same bytes.
 */

/** A message type and its nested types. */
export function messageModel(type: Type, fileName: string, unescape: Unescape): MessageModel {
  const fullName = unescapeFullName(type.fullName, unescape);
  refuseMessageSet(fullName, fileName, type.options?.message_set_wire_format);
  const fields = type.fieldsArray.filter(
    (f) => f.declaringField === null && f.extend === undefined,
  );
  const nested = type.nestedArray;
  return {
    name: unescape(type.name),
    fullName,
    fields: fields.map((f) => fieldModel(f, type, fileName, unescape)),
    oneofs: type.oneofsArray
      .filter((o) => !o.fieldsArray.every(isProto3Optional))
      .map((o) => unescape(o.name)),
    messages: nested
      .filter((n): n is Type => n instanceof Type)
      .map((n) => messageModel(n, fileName, unescape)),
    enums: nested.filter((n): n is Enum => n instanceof Enum).map((e) => enumModel(e, unescape)),
    extensions: extensionModels(nested, type.fullName, fileName, unescape),
    extendable: (type.extensions ?? []).length > 0,
    group: isGroup(type),
  };
}

/** Extension fields among `objects` (declared in `scope`), descriptor options left out. */
export function extensionModels(
  objects: readonly ReflectionObject[],
  scope: string,
  fileName: string,
  unescape: Unescape,
): ExtensionModel[] {
  return objects
    .filter((o): o is Field => o instanceof Field && o.extend !== undefined)
    .map((f) => {
      f.resolve();
      const extendee = f.extensionField?.parent ?? f.parent?.lookup(f.extend ?? '');
      return { f, extendee: unescapeFullName(extendee?.fullName ?? f.extend ?? '', unescape) };
    })
    .filter(({ extendee }) => !isOptionExtendee(extendee))
    .map(({ f, extendee }) => {
      const model = fieldModel(f, undefined, fileName, unescape, unescapeFullName(scope, unescape));
      const fullName = `${unescapeFullName(scope, unescape)}.${model.name}`.replace(/^\./, '');
      return { ...model, fullName, extendee };
    });
}

/** protobufjs marks a group's type with `group` (in its JSON and on the object, not its typings). */
function isGroup(type: Type): boolean {
  return (type as Type & { group?: boolean }).group === true;
}

/**
 * The group type of `f` when `f` was declared as a group (`optional group SearchResult = 1
 * {...}`), not as a field of a group's type (`optional SearchResult other = 2`): protobufjs's
 * parser makes the group field `new Field(lcFirst(Name), id, Name)` beside its type.
 */
export function declaredGroup(f: Field): Type | undefined {
  const type = f.resolvedType;
  if (!(type instanceof Type) || !isGroup(type) || f.type !== type.name) return undefined;
  const lcFirst = type.name.charAt(0).toLowerCase() + type.name.slice(1);
  return f.name === lcFirst && type.parent === f.parent ? type : undefined;
}

function isProto3Optional(f: Field): boolean {
  return (f.options as Record<string, unknown> | undefined)?.proto3_optional === true;
}

function fieldModel(
  f: Field,
  owner: Type | undefined,
  fileName: string,
  unescape: Unescape,
  scope = unescapeFullName(owner?.fullName ?? '', unescape),
): FieldModel {
  f.resolve();
  const group = declaredGroup(f);
  // protoc names a group field by its type in lower case (`SearchResult` → `searchresult`);
  // protobufjs only lowers the first letter (`searchResult`), unlike the protoc plugin's input.
  const name = group === undefined ? unescape(f.name) : group.name.toLowerCase();
  const where = `${scope}.${name} in ${fileName}`;
  const proto3Optional = isProto3Optional(f);
  const base = {
    name,
    number: f.id,
    proto3Optional,
    oneof: f.partOf !== null && !proto3Optional ? unescape(f.partOf.name) : undefined,
  };
  const type = typeRef(f, where, unescape);
  if (f instanceof MapField) {
    return { ...base, label: 'map', mapKey: f.keyType as ScalarType, type };
  }
  const label = f.repeated ? 'repeated' : f.rule === 'required' ? 'required' : 'optional';
  const model: { -readonly [K in keyof FieldModel]: FieldModel[K] } = { ...base, label, type };
  const options = (f.options ?? {}) as Record<string, unknown>;
  if (typeof options.packed === 'boolean') model.packed = options.packed;
  if (options.default !== undefined) {
    // An integer past 2^53 comes as its token (raw-option-values.ts), read here exactly.
    const raw = rawDefaultToken(options.default);
    const value = raw === undefined ? options.default : integerTokenValue(raw).toString();
    model.defaultValue = defaultFromProtobufjs(value, type, where);
  }
  if (group !== undefined) model.group = true;
  return model;
}

function typeRef(f: Field, where: string, unescape: Unescape): TypeRef {
  const resolved = f.resolvedType;
  if (resolved instanceof Type) {
    return { kind: 'message', fullName: unescapeFullName(resolved.fullName, unescape) };
  }
  if (resolved instanceof Enum) {
    return { kind: 'enum', fullName: unescapeFullName(resolved.fullName, unescape) };
  }
  if (!SCALAR_TYPES.includes(f.type as ScalarType)) {
    throw new UnsupportedProtoError(`field ${where} has unresolved type ${f.type}`);
  }
  return { kind: 'scalar', scalar: f.type as ScalarType };
}

/** An enum type. */
export function enumModel(e: Enum, unescape: Unescape): EnumModel {
  return {
    name: unescape(e.name),
    fullName: unescapeFullName(e.fullName, unescape),
    values: Object.entries(e.values).map(([name, number]) => ({ name: unescape(name), number })),
  };
}

/** A service and its rpcs. */
export function serviceModel(s: Service, unescape: Unescape): ServiceModel {
  return {
    name: unescape(s.name),
    fullName: unescapeFullName(s.fullName, unescape),
    methods: s.methodsArray.map((m) => {
      m.resolve();
      return {
        name: unescape(m.name),
        inputType: unescapeFullName(m.resolvedRequestType?.fullName ?? m.requestType, unescape),
        outputType: unescapeFullName(m.resolvedResponseType?.fullName ?? m.responseType, unescape),
        clientStreaming: m.requestStream === true,
        serverStreaming: m.responseStream === true,
      };
    }),
  };
}

/** `.pkg.Msg` → `pkg.Msg`. */
export function strip(fullName: string): string {
  return fullName.replace(/^\./, '');
}

/** Maps one identifier as protobufjs parsed it back to the .proto name (see proto-source.ts). */
export type Unescape = (name: string) => string;

/** `.pkg.Msg` → `pkg.Msg`, each segment unescaped. */
export function unescapeFullName(fullName: string, unescape: Unescape): string {
  return strip(fullName).split('.').map(unescape).join('.');
}
