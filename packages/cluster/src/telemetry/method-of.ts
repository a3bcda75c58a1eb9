/** The type-name tag of core's serialization contract (`withTypeName`, codegen's messages). */
const TYPE_NAME_TAG = Symbol.for('granary.typeName');
/** The message a generated client sends: `{ method: 'package.Service/Method', payload }`. */
const GRAIN_INVOKE = 'granary.GrainInvoke';

/**
 * The `rpc.method` of a grain call's message: `package.Service/Method` for a generated
 * client's call, the protobuf type name of a tagged or decoded message, the class name of a
 * class instance, else the JavaScript type (`string`, `number`, `object`, `array`). Bounded:
 * the methods and message types of the application, never a value.
 */
export function methodOf(message: unknown): string {
  if (typeof message !== 'object') return typeof message;
  if (message === null) return 'null';
  if (Array.isArray(message)) return 'array';
  const typeName = typeNameOf(message);
  if (typeName !== undefined) {
    const method = (message as { method?: unknown }).method;
    return typeName === GRAIN_INVOKE && typeof method === 'string' ? method : typeName;
  }
  const ctor = (message as { constructor?: { name?: unknown } }).constructor;
  const name = typeof ctor === 'function' ? ctor.name : undefined;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'object';
}

/** Span names made so far, by kind and method (both bounded; emptied past MAX_SPAN_NAMES). */
const spanNames = new Map<string, Map<string, string>>();
let spanNameCount = 0;
const MAX_SPAN_NAMES = 4096;

/**
 * A call's span name: the method of a generated client's call (`package.Service/Method`, as the
 * RPC conventions name spans), else `kind/message type`. Made once per kind and method: every
 * span keeps its name until exported, and a traced member names two spans per call.
 */
export function spanNameOf(kind: string, method: string): string {
  let byMethod = spanNames.get(kind);
  let name = byMethod?.get(method);
  if (name !== undefined) return name;
  name = method.includes('/') ? method : `${kind}/${method}`;
  if (spanNameCount >= MAX_SPAN_NAMES) {
    spanNames.clear();
    spanNameCount = 0;
    byMethod = undefined;
  }
  if (byMethod === undefined) spanNames.set(kind, (byMethod = new Map()));
  byMethod.set(method, name);
  spanNameCount++;
  return name;
}

function typeNameOf(message: object): string | undefined {
  const tag = (message as { [TYPE_NAME_TAG]?: unknown })[TYPE_NAME_TAG];
  if (typeof tag === 'string') return tag;
  const type = (message as { $type?: { fullName?: unknown } }).$type;
  if (type !== undefined && typeof type.fullName === 'string') {
    return type.fullName.startsWith('.') ? type.fullName.slice(1) : type.fullName;
  }
  return undefined;
}
