import { Enum, MapField, Service, Type } from 'protobufjs';
import type { Field } from 'protobufjs';
import { UnsupportedProtoError } from '../errors';
import { SCALAR_TYPES } from '../model/model';
import type {
  EnumModel,
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
export function messageModel(type: Type, fileName: string): MessageModel {
  if ((type as { group?: boolean }).group === true) {
    throw new UnsupportedProtoError(
      `${strip(type.fullName)} in ${fileName} is a group; groups are not supported, use a message field`,
    );
  }
  const fields = type.fieldsArray.filter(
    (f) => f.declaringField === null && f.extend === undefined,
  );
  return {
    name: type.name,
    fullName: strip(type.fullName),
    fields: fields.map((f) => fieldModel(f, type, fileName)),
    oneofs: type.oneofsArray
      .filter((o) => !o.fieldsArray.every(isProto3Optional))
      .map((o) => o.name),
    messages: type.nestedArray
      .filter((n): n is Type => n instanceof Type)
      .map((n) => messageModel(n, fileName)),
    enums: type.nestedArray.filter((n): n is Enum => n instanceof Enum).map(enumModel),
  };
}

function isProto3Optional(f: Field): boolean {
  return (f.options as Record<string, unknown> | undefined)?.proto3_optional === true;
}

function fieldModel(f: Field, owner: Type, fileName: string): FieldModel {
  f.resolve();
  const proto3Optional = isProto3Optional(f);
  const base = {
    name: f.name,
    number: f.id,
    proto3Optional,
    oneof: f.partOf !== null && !proto3Optional ? f.partOf.name : undefined,
  };
  const type = typeRef(f, owner, fileName);
  if (f instanceof MapField) {
    return { ...base, label: 'map', mapKey: f.keyType as ScalarType, type };
  }
  const label = f.repeated ? 'repeated' : f.rule === 'required' ? 'required' : 'optional';
  return { ...base, label, type };
}

function typeRef(f: Field, owner: Type, fileName: string): TypeRef {
  const resolved = f.resolvedType;
  if (resolved instanceof Type) return { kind: 'message', fullName: strip(resolved.fullName) };
  if (resolved instanceof Enum) return { kind: 'enum', fullName: strip(resolved.fullName) };
  if (!SCALAR_TYPES.includes(f.type as ScalarType)) {
    throw new UnsupportedProtoError(
      `field ${strip(owner.fullName)}.${f.name} in ${fileName} has unresolved type ${f.type}`,
    );
  }
  return { kind: 'scalar', scalar: f.type as ScalarType };
}

/** An enum type. */
export function enumModel(e: Enum): EnumModel {
  return {
    name: e.name,
    fullName: strip(e.fullName),
    values: Object.entries(e.values).map(([name, number]) => ({ name, number })),
  };
}

/** A service and its rpcs. */
export function serviceModel(s: Service): ServiceModel {
  return {
    name: s.name,
    fullName: strip(s.fullName),
    methods: s.methodsArray.map((m) => {
      m.resolve();
      return {
        name: m.name,
        inputType: strip(m.resolvedRequestType?.fullName ?? m.requestType),
        outputType: strip(m.resolvedResponseType?.fullName ?? m.responseType),
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
