import { Enum, Field, OneOf, Type } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { syntheticOneofNames } from '../model/synthetic-oneofs';
import { declarationLocation } from './source-location';

/*
 * protobufjs's parser names the oneof of a proto3 `optional x` `_x` as it reads the field, and
 * refuses the message when a real oneof is named so too (declared before or after). protoc names
 * these oneofs once the message is read, with `X` in front until the name is free. While one
 * file parses, they get a name no .proto can write; once it is parsed, protoc's.
 */

type Add = (this: Type, object: unknown) => Type;

/** What a synthetic oneof is called while its file parses. */
const standIn = (field: string): string => `<optional ${field}>`;

/**
 * Runs `parse` (one protobufjs parse of `file`, its `source` as written) and gives each
 * proto3 `optional` field's oneof protoc's name. A name another member of the message already
 * has (a nested message `_x`) is refused at that member, as protoc refuses it.
 */
export function parseWithSyntheticOneofs<T>(parse: () => T, file: string, source: string): T {
  const parents = new Set<Type>();
  const proto = Type.prototype as unknown as { add: Add };
  const { add } = proto;
  proto.add = function addMember(object) {
    const field = object instanceof OneOf ? syntheticMember(object) : undefined;
    if (field !== undefined) {
      (object as OneOf).name = standIn(field.name);
      // An extension's oneof is protobufjs's own; protoc has none, and it keeps the stand-in.
      if (field.extend === undefined) parents.add(this);
    }
    return add.call(this, object);
  };
  let result: T;
  try {
    result = parse();
  } finally {
    proto.add = add;
  }
  for (const type of parents) nameSyntheticOneofs(type, file, source);
  return result;
}

/** The field of `oneof` when it is the synthetic oneof of a proto3 `optional` field. */
function syntheticMember(oneof: OneOf): Field | undefined {
  const [field, ...more] = oneof.fieldsArray;
  return more.length === 0 && field?.options?.proto3_optional === true ? field : undefined;
}

function nameSyntheticOneofs(type: Type, file: string, source: string): void {
  const fields = type.fieldsArray
    .filter((f) => f.declaringField === null && f.extend === undefined)
    .map((f) => ({ name: f.name, proto3Optional: f.options?.proto3_optional === true }));
  const real = type.oneofsArray.map((o) => o.name).filter((n) => !n.startsWith('<'));
  for (const [field, name] of syntheticOneofNames(fields, real)) {
    const oneof = type.oneofs[standIn(field)];
    const other = type.get(name);
    if (other !== null) {
      const located = other instanceof Type || other instanceof Enum || other instanceof Field;
      const where = located ? declarationLocation(other, new Map([[file, source]]), file) : file;
      throw new ProtoParseError(
        `${where}: "${name}" is already defined in "${type.fullName.slice(1)}" (protoc names the oneof of optional field ${field} so)`,
      );
    }
    delete type.oneofs[standIn(field)];
    oneof.name = name;
    type.oneofs[name] = oneof;
    // Type caches its oneofs as an array; protobufjs clears it the same way on add and remove.
    (type as unknown as { _oneofsArray: OneOf[] | null })._oneofsArray = null;
  }
}
