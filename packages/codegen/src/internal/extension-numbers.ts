import { Field, Type } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { declarationLocation } from './source-location';

/*
 * protobufjs adds each extension to its extendee as a field, and throws `duplicate id` when two
 * extensions of one message share a number. protoc 3.21 refuses that within one file, and only
 * warns when the two are in different files ("Extension number 100 has already been used in
 * "p.M" by extension "p.a" defined in a.proto."). While files parse, such a second extension is
 * kept out of its extendee (protobufjs cannot hold two fields of one number) but still knows
 * it, so the checks that follow see its extendee; the pair is kept for the warning.
 */

type Add = (this: Type, object: unknown) => Type;

/** Two extensions of one message with one number, declared in two files. */
export interface ExtensionNumberClash {
  readonly first: Field;
  readonly second: Field;
}

/**
 * Runs `parse` (one protobufjs parse) collecting into `clashes` the extensions that reuse a
 * number of their extendee from another file; one reused in the same file is refused at it.
 */
export function parseWithExtensionNumbers<T>(
  parse: () => T,
  clashes: ExtensionNumberClash[],
  sources: ReadonlyMap<string, string>,
): T {
  const proto = Type.prototype as unknown as { add: Add };
  const { add } = proto;
  proto.add = function addMember(object) {
    const second = object instanceof Field ? object.declaringField : null;
    const first =
      second === null ? undefined : this.fieldsById[(object as Field).id]?.declaringField;
    if (second === null || first === null || first === undefined) return add.call(this, object);
    if (first.filename === second.filename) {
      const where = declarationLocation(second, sources, second.filename ?? '');
      throw new ProtoParseError(`${where}: ${clashText(first, second, this)}`);
    }
    clashes.push({ first, second });
    (object as Field).parent = this;
    return this;
  };
  try {
    return parse();
  } finally {
    proto.add = add;
  }
}

/**
 * protoc's warning for each clash, at the extension of the file protoc builds later (`order`:
 * files as protoc builds them, each after its imports).
 */
export function extensionNumberWarnings(
  clashes: readonly ExtensionNumberClash[],
  order: readonly string[],
  sources: ReadonlyMap<string, string>,
): string[] {
  const rank = (f: Field) => order.indexOf(f.filename ?? '');
  return clashes.map(({ first, second }) => {
    const [earlier, later] = rank(first) <= rank(second) ? [first, second] : [second, first];
    const extendee = (later.extensionField?.parent ?? earlier.extensionField?.parent) as Type;
    const where = declarationLocation(later, sources, later.filename ?? '');
    return `${where}: ${clashText(earlier, later, extendee)} defined in ${earlier.filename ?? ''} (protoc only warns; a program cannot load both generated modules)`;
  });
}

function clashText(first: Field, second: Field, extendee: Type): string {
  const name = (f: Field) => f.fullName.slice(1);
  return `extension ${name(second)}: extension number ${second.id} has already been used in "${extendee.fullName.slice(1)}" by extension "${name(first)}"`;
}

/** The files protoc builds for `inputs`, in its order: each after the files it imports. */
export function buildOrder(
  inputs: readonly string[],
  imports: ReadonlyMap<string, readonly string[]>,
): string[] {
  const order: string[] = [];
  const visit = (name: string): void => {
    if (order.includes(name)) return;
    for (const dep of imports.get(name) ?? []) visit(dep);
    if (!order.includes(name)) order.push(name);
  };
  for (const name of inputs) visit(name);
  return order;
}
