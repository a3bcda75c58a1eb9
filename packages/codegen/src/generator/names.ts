import { posix } from 'node:path';

/**
 * Words a generated declaration cannot be named: JavaScript/TypeScript reserved and strict-mode
 * words, TypeScript's built-in type names (an interface cannot be called `string`), and the
 * globals generated code uses (`Promise`, `Uint8Array`, ...), so a message named `Promise`
 * does not shadow the real one.
 */
const RESERVED_TYPE_NAMES = new Set([
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do',
  'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import',
  'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try',
  'typeof', 'var', 'void', 'while', 'with', 'as', 'implements', 'interface', 'let', 'package',
  'private', 'protected', 'public', 'static', 'yield', 'await', 'async', 'of', 'type', 'declare',
  'module', 'namespace', 'require', 'exports', 'arguments', 'eval', 'undefined', 'NaN',
  'Infinity', 'any', 'unknown', 'never', 'object', 'string', 'number', 'boolean', 'symbol',
  'bigint', 'keyof', 'readonly', 'unique', 'infer', 'is', 'asserts', 'global', 'Object',
  'Array', 'String', 'Number', 'Boolean', 'Symbol', 'BigInt', 'Function', 'Promise', 'Error',
  'Uint8Array', 'Record', 'Partial', 'Date', 'Map', 'Set', 'JSON', 'Math', 'ReturnType',
]); // prettier-ignore

/**
 * Names with a meaning to JavaScript itself on any object: `then` (an object with it is a
 * thenable, so `await` calls it), every member of `Object.prototype` (`constructor`,
 * `__proto__`, `toString`, `valueOf`, `hasOwnProperty`...), `toJSON` (JSON.stringify calls it)
 * and `prototype`. No generated property, method, enum member or export takes one of them.
 */
const OBJECT_MEMBER_NAMES = new Set([
  'then', 'constructor', '__proto__', 'prototype', 'toString', 'toLocaleString', 'valueOf',
  'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', 'toJSON', '__defineGetter__',
  '__defineSetter__', '__lookupGetter__', '__lookupSetter__',
]); // prettier-ignore

/**
 * Member names an rpc method must not take besides those: the lifecycle hooks of `Grain`, the
 * state members of `GrainBase` (an rpc `State` or `WriteState` would redeclare them with another
 * signature, and the generated class would not compile) and the `identity` / `kind` getters of
 * the client.
 */
const RESERVED_METHOD_NAMES = new Set([
  'identity',
  'kind',
  'receive',
  'receiveDefault',
  'onActivate',
  'onDeactivate',
  'state',
  'stateVersion',
  'writeState',
  'clearState',
]);

/** The escape rule: a reserved name gets a trailing `_` (`then` → `then_`). */
function escape(name: string, ...reserved: ReadonlySet<string>[]): string {
  return reserved.some((set) => set.has(name)) ? `${name}_` : name;
}

/** `Name` → `Name_` when it is reserved as a declaration name in TypeScript or JavaScript. */
export function safeTypeName(name: string): string {
  return escape(name, RESERVED_TYPE_NAMES, OBJECT_MEMBER_NAMES);
}

/** The member name of an enum value: as in the .proto, escaped when JavaScript gives it a meaning. */
export function enumMemberName(protoName: string): string {
  return escape(protoName, OBJECT_MEMBER_NAMES);
}

/**
 * A name segment in the protobufjs descriptor embedded in a generated module. protobufjs holds
 * declarations in plain objects, where `__proto__` cannot be a key; every other name is kept.
 */
export function runtimeName(protoName: string): string {
  return protoName === '__proto__' ? '__proto___' : protoName;
}

/** A full name (`pkg.Msg`) with each segment through `runtimeName`. */
export function runtimeFullName(fullName: string): string {
  return fullName.split('.').map(runtimeName).join('.');
}

/**
 * The TypeScript name of a message or enum: its path below the package, nested names joined by
 * `_` (`Order.Line` → `Order_Line`), escaped when reserved.
 */
export function typeNameInFile(fullName: string, pkg: string): string {
  const local = pkg === '' ? fullName : fullName.slice(pkg.length + 1);
  return safeTypeName(local.split('.').join('_'));
}

/**
 * The property name of a field or oneof: protobufjs's camelCase (`order_id` → `orderId`),
 * escaped when JavaScript gives it a meaning, as written or camel-cased (`__proto__` →
 * `__proto___`, `to_string` → `toString_`). It is also the
 * field name in the embedded descriptor, so objects and codecs agree.
 */
export function propertyName(protoName: string): string {
  // Reserved as written (`__proto__`): escaped as written, not camel-cased first.
  if (OBJECT_MEMBER_NAMES.has(protoName)) return `${protoName}_`;
  const camel =
    protoName.charAt(0) +
    protoName.slice(1).replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  return escape(camel, OBJECT_MEMBER_NAMES);
}

/**
 * The property of an extension on its extendee: protobufjs names the field it adds there by the
 * extension's scope and its key in that scope (`extensionKeys`) with a leading dot
 * (`pkg.Scope.ext_name` → `.pkg.Scope.extName`).
 */
export function extensionPropertyName(fullName: string, key: string): string {
  const dot = fullName.lastIndexOf('.');
  const scope = dot < 0 ? '' : runtimeFullName(fullName.slice(0, dot));
  return `${scope === '' ? '' : `.${scope}`}.${key}`;
}

/**
 * The method name of an rpc on the client and grain classes: `GetOrder` → `getOrder`, escaped
 * when it is a member every object has (`Then` → `then_`: a client is never a thenable) or one
 * of the base classes'.
 */
export function methodName(rpcName: string): string {
  const name = rpcName.charAt(0).toLowerCase() + rpcName.slice(1);
  return escape(name, OBJECT_MEMBER_NAMES, RESERVED_METHOD_NAMES);
}

/** `Ponger` → `pongerKind`: the kind helper's name. */
export function kindHelperName(serviceName: string): string {
  return `${serviceName.charAt(0).toLowerCase()}${serviceName.slice(1)}Kind`;
}

/** `shop/orders.proto` → `shop/orders.granary.ts`. */
export function outputFileName(protoName: string): string {
  return `${protoName.replace(/\.proto$/, '')}.granary.ts`;
}

/**
 * The module specifier one generated file uses to import another:
 * (`shop/orders.proto`, `common/types.proto`) → `../common/types.granary` + extension.
 */
export function relativeImport(fromProto: string, toProto: string, extension: string): string {
  const target = `${toProto.replace(/\.proto$/, '')}.granary`;
  const rel = posix.relative(posix.dirname(fromProto), target);
  return `${rel.startsWith('.') ? rel : `./${rel}`}${extension}`;
}

/** `common/types.proto` → `$common_types`: a namespace alias no proto name can clash with. */
export function importAlias(protoName: string): string {
  return `$${protoName.replace(/\.proto$/, '').replace(/[^A-Za-z0-9]/g, '_')}`;
}

/**
 * Characters that end a line (or a string literal) in JavaScript, and the other control
 * characters. A .proto path may hold any of them (protoc reads `$'a\nb.proto'`); written as
 * they are, one would end the header comment or a string literal and the rest of the name
 * would be read as code.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const LINE_BREAKING = /[\u0000-\u001f\u007f\u2028\u2029]/g;

/** `s` with each control or line-breaking character written as a `\uXXXX` escape. */
export function escapeControls(s: string): string {
  return s.replace(LINE_BREAKING, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A JS string literal for generated code. */
export function quote(s: string): string {
  return `'${escapeControls(s.replace(/\\/g, '\\\\').replace(/'/g, "\\'"))}'`;
}
