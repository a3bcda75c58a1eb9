import type { EnumModel, ExtensionModel, FileModel, MessageModel } from '../model/model';
import { enumMemberName, propertyName, runtimeName } from './names';
import { distinctName } from './type-names';

/** The property names of one message's oneofs and fields, by their .proto names. */
export interface MessageMembers {
  readonly oneofs: ReadonlyMap<string, string>;
  readonly fields: ReadonlyMap<string, string>;
}

/**
 * The property of each oneof and field of `message`, in the interface and in the embedded
 * descriptor alike (so decoded objects match the interface). camelCase and the escape rule can
 * give two members one name that protoc accepts as different (proto2 `foo_bar` and `fooBar`;
 * `to_string` and `toString_`; oneof `then` and field `then_`): a name as written in the .proto
 * keeps it, the others get trailing `_` in declaration order, oneofs first.
 */
export function messageMembers(message: MessageModel): MessageMembers {
  const members = [
    ...message.oneofs.map((name) => ({ kind: 'oneof' as const, name })),
    ...message.fields.map((f) => ({ kind: 'field' as const, name: f.name })),
  ];
  const ranked = members
    .map((m, order) => ({ ...m, base: propertyName(m.name), order }))
    .sort((a, b) => asWritten(a) - asWritten(b) || a.order - b.order);
  const taken = new Set<string>();
  const oneofs = new Map<string, string>();
  const fields = new Map<string, string>();
  for (const m of ranked) {
    (m.kind === 'oneof' ? oneofs : fields).set(m.name, distinctName(m.base, taken));
  }
  return { oneofs, fields };
}

/**
 * The TypeScript enum member of each value of `e`, in value order: `then` escaped onto a value
 * really named `then_` gets one `_` more (`then__`), by the same rule as message members.
 */
export function enumMembers(e: EnumModel): string[] {
  const ranked = e.values
    .map((v, order) => ({ name: v.name, base: enumMemberName(v.name), order }))
    .sort((a, b) => asWritten(a) - asWritten(b) || a.order - b.order);
  const taken = new Set<string>();
  const members: string[] = [];
  for (const r of ranked) members[r.order] = distinctName(r.base, taken);
  return members;
}

/**
 * The name of each extension of `file` in its scope of the embedded descriptor, which is also
 * the last part of its property on the extendee (`.pkg.myExt`). protobufjs keys an extension by
 * its camelCase name beside the scope's messages and enums, so `my_ext` beside `myExt` (another
 * extension or a message) would overwrite one of them: as for fields, a name as written keeps
 * it and the others get trailing `_`.
 */
export function extensionKeys(file: FileModel): ReadonlyMap<ExtensionModel, string> {
  const keys = new Map<ExtensionModel, string>();
  const walk = (
    messages: readonly MessageModel[],
    enums: readonly EnumModel[],
    extensions: readonly ExtensionModel[],
  ) => {
    const taken = new Set([...messages, ...enums].map((d) => runtimeName(d.name)));
    const ranked = extensions
      .map((ext, order) => ({ ext, base: propertyName(ext.name), order }))
      .sort((a, b) => asWritten(a) - asWritten(b) || a.order - b.order);
    for (const { ext, base } of ranked) keys.set(ext, distinctName(base, taken));
    for (const m of messages) walk(m.messages, m.enums, m.extensions);
  };
  walk(file.messages, file.enums, file.extensions);
  return keys;
}

/** 0 for a member whose property is its .proto name, 1 for one camelCased or escaped. */
function asWritten(m: {
  readonly base: string;
  readonly name?: string;
  readonly ext?: ExtensionModel;
}): number {
  return m.base === (m.name ?? m.ext?.name) ? 0 : 1;
}
