import { Enum, type Field, Method, Namespace } from 'protobufjs';
import type { ReflectionObject, Root } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { unescapeFullName } from './reflection-to-model';
import { unescapeIdentifier } from './proto-source';
import { declarationLocation, declarationsBelow } from './source-location';

/*
 * A dotted type name (`b.X`) is resolved by protoc from its FIRST component: the innermost
 * scope where a message, enum, service or package (a protobufjs Namespace or Enum) named `b` exists decides, and `X` must then
 * be in that `b`. protobufjs instead tries the whole name in each scope outwards, so where an
 * inner `b` lacks `X` it took an outer `b.X` that protoc refuses to see ("b.X" is resolved to
 * "p.M.b.X", which is not defined). This check refuses the same names.
 */

/** Throws a ProtoParseError at the first field, extension or rpc whose type protoc resolves elsewhere. */
export function checkRelativeNames(root: Root, sources: ReadonlyMap<string, string>): void {
  for (const obj of declarationsBelow(root)) {
    if (obj instanceof Enum || obj.filename === null || !sources.has(obj.filename)) continue;
    for (const [written, resolved] of references(obj)) {
      const problem = protocProblem(obj.parent, written, resolved);
      if (problem === undefined) continue;
      const where = declarationLocation(obj, sources, obj.filename);
      throw new ProtoParseError(`${where}: ${full(obj.fullName)}: ${problem}`);
    }
  }
}

/** The type names `obj` writes, each with what protobufjs resolved it to. */
function references(obj: Field | Method): [string, ReflectionObject | null][] {
  if (obj instanceof Method) {
    return [
      [obj.requestType, obj.resolvedRequestType],
      [obj.responseType, obj.resolvedResponseType],
    ];
  }
  const out: [string, ReflectionObject | null][] = [[obj.type, obj.resolvedType]];
  if (obj.extend !== undefined) out.push([obj.extend, obj.extensionField?.parent ?? null]);
  return out;
}

/** What protoc says of `name` written in `scope` when it resolves it to another declaration. */
function protocProblem(
  scope: Namespace | null,
  name: string,
  resolved: ReflectionObject | null,
): string | undefined {
  if (name.startsWith('.') || !name.includes('.') || resolved === null) return undefined;
  const [first, ...rest] = name.split('.');
  for (let ns = scope; ns !== null; ns = ns.parent) {
    const children: Record<string, ReflectionObject> = ns.nested ?? {};
    const hit = Object.hasOwn(children, first) ? children[first] : undefined;
    // protoc skips what is not an aggregate (a field, an enum value) and keeps looking out.
    if (!(hit instanceof Namespace || hit instanceof Enum)) continue;
    let target: ReflectionObject | undefined = hit;
    for (const part of rest) {
      const nested: Record<string, ReflectionObject> =
        target instanceof Namespace ? (target.nested ?? {}) : {};
      target = Object.hasOwn(nested, part) ? nested[part] : undefined;
    }
    if (target === resolved) return undefined;
    const at = `${full(hit.fullName)}.${rest.map(unescapeIdentifier).join('.')}`;
    return `"${unescapeName(name)}" is resolved to "${at}", which is not defined (protoc resolves a dotted name from the innermost scope that has its first part; write ".${full(resolved.fullName)}")`;
  }
  return undefined;
}

function unescapeName(name: string): string {
  return name.split('.').map(unescapeIdentifier).join('.');
}

function full(fullName: string): string {
  return unescapeFullName(fullName, unescapeIdentifier);
}
