import { Enum, type Field, Method, Namespace, Service, Type } from 'protobufjs';
import type { ReflectionObject, Root } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { unescapeFullName } from './reflection-to-model';
import { unescapeIdentifier } from './proto-source';
import { kindOf } from './scope-symbols';
import { declarationLocation, declarationsBelow } from './source-location';

/*
 * A dotted type name (`b.X`) is resolved by protoc from its FIRST component: the innermost
 * scope where a message, enum, service or package (a protobufjs Namespace or Enum) named `b` exists decides, and `X` must then
 * be in that `b`. protobufjs instead tries the whole name in each scope outwards, so where an
 * inner `b` lacks `X` it took an outer `b.X` that protoc refuses to see ("b.X" is resolved to
 * "p.M.b.X", which is not defined). This check refuses the same names.
 *
 * An rpc's plain name (`Ping`) is looked up by protoc among every symbol, not only types,
 * starting in the service: `rpc Ping(Ping)` finds the rpc itself, an enum value of the package
 * or a service before the message, and is refused ('"Ping" is not a message type'); protobufjs
 * looks at types only and took the message.
 */

/** Throws a ProtoParseError at the first field, extension or rpc whose type protoc resolves elsewhere. */
export function checkRelativeNames(root: Root, sources: ReadonlyMap<string, string>): void {
  for (const obj of declarationsBelow(root)) {
    if (obj instanceof Enum || obj.filename === null || !sources.has(obj.filename)) continue;
    for (const [written, resolved] of references(obj)) {
      const problem =
        obj instanceof Method
          ? rpcTypeProblem(obj, written, resolved)
          : protocProblem(obj.parent, written, resolved);
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

/** What protoc says of the request or response type `name` of `method`, where protobufjs differs. */
function rpcTypeProblem(
  method: Method,
  name: string,
  resolved: ReflectionObject | null,
): string | undefined {
  const service = method.parent;
  if (name.includes('.') || resolved === null || !(service instanceof Service)) {
    return protocProblem(method.parent, name, resolved);
  }
  let first: string | undefined = Object.hasOwn(service.methods, name)
    ? `rpc ${full(service.fullName)}.${unescapeIdentifier(name)}`
    : undefined;
  for (let ns = service.parent; first === undefined && ns !== null; ns = ns.parent) {
    first = symbolNamed(ns, name);
  }
  if (first === undefined || first === '') return undefined;
  return `"${unescapeIdentifier(name)}" is not a message type (protoc finds ${first} first; write ".${full(resolved.fullName)}")`;
}

/** The symbol protoc finds as `name` in `ns` when it is not a message; '' for a message. */
function symbolNamed(ns: Namespace, name: string): string | undefined {
  const nested: Record<string, ReflectionObject> = ns.nested ?? {};
  if (Object.hasOwn(nested, name)) {
    const hit = nested[name];
    if (hit instanceof Type) return '';
    return `${kindOf(hit)} ${full(hit.fullName)}`;
  }
  // Enum values are symbols of the scope enclosing their enum (C++ scoping).
  const owner = ns.nestedArray.find((e) => e instanceof Enum && Object.hasOwn(e.values, name));
  return owner === undefined
    ? undefined
    : `value ${unescapeIdentifier(name)} of enum ${full(owner.fullName)}`;
}

function unescapeName(name: string): string {
  return name.split('.').map(unescapeIdentifier).join('.');
}

function full(fullName: string): string {
  return unescapeFullName(fullName, unescapeIdentifier);
}
