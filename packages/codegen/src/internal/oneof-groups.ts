import { OneOf, Type } from 'protobufjs';
import type { Namespace } from 'protobufjs';

/*
 * proto2 allows a group as a member of a oneof (`oneof o { group G = 1 { ... } }`); protoc
 * accepts it, and protobufjs's parser hands the group's message type to the oneof, which refuses
 * it ("field must be a Field"). While one file parses, the oneof keeps that type aside instead,
 * and hands it to its message when it is added there: the group type is then a nested type in
 * declaration order, as protoc has it.
 */

type Add = (this: OneOf, member: unknown) => OneOf;
type OnAdd = (this: OneOf, parent: Namespace) => void;

/** Runs `parse` (one protobufjs parse) with oneofs accepting group types. */
export function parseWithOneofGroups<T>(parse: () => T): T {
  const groups = new Map<OneOf, Type[]>();
  const proto = OneOf.prototype as unknown as { add: Add; onAdd: OnAdd };
  const { add, onAdd } = proto;
  proto.add = function addMember(member) {
    if (!(member instanceof Type && (member as { group?: boolean }).group === true)) {
      return add.call(this, member);
    }
    groups.set(this, [...(groups.get(this) ?? []), member]);
    return this;
  };
  proto.onAdd = function onAddToMessage(parent) {
    for (const type of groups.get(this) ?? []) parent.add(type);
    groups.delete(this);
    onAdd.call(this, parent);
  };
  try {
    return parse();
  } finally {
    proto.add = add;
    proto.onAdd = onAdd;
  }
}
