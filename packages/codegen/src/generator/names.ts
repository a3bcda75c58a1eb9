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
  'Uint8Array', 'Record', 'Partial', 'Date', 'Map', 'Set', 'JSON', 'Math',
]); // prettier-ignore

/**
 * Member names an rpc method must not take: the constructor, the lifecycle hooks of `Grain`,
 * and the `identity` / `kind` getters of the client.
 */
const RESERVED_METHOD_NAMES = new Set([
  'constructor',
  'identity',
  'kind',
  'receive',
  'receiveDefault',
  'onActivate',
  'onDeactivate',
]);

/** `Name` → `Name_` when it is reserved as a declaration name in TypeScript. */
export function safeTypeName(name: string): string {
  return RESERVED_TYPE_NAMES.has(name) ? `${name}_` : name;
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
 * The property name of a field: protobufjs's camelCase (`order_id` → `orderId`), which is
 * also the field name in the embedded descriptor, so objects and codecs agree.
 */
export function propertyName(protoName: string): string {
  return (
    protoName.charAt(0) +
    protoName.slice(1).replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())
  );
}

/** The method name of an rpc on the client and grain classes: `GetOrder` → `getOrder`. */
export function methodName(rpcName: string): string {
  const name = rpcName.charAt(0).toLowerCase() + rpcName.slice(1);
  return RESERVED_METHOD_NAMES.has(name) ? `${name}_` : name;
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

/** A JS string literal for generated code. */
export function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
