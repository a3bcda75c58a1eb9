/**
 * The key under which a message carries its wire type name. `Symbol.for` so that two copies of
 * the package (or generated code bundled separately) agree on the same symbol.
 */
export const TYPE_NAME: unique symbol = Symbol.for('granary.typeName') as never;

/**
 * Tags `value` with a wire type name (a non-enumerable property, so JSON and equality checks do
 * not see it) and returns the same object. A tagged object travels as the protobuf type of
 * that full name when one is registered, otherwise as JSON that is re-tagged on arrival.
 *
 * @example
 * ctx.send(pid, withTypeName('granary.GrainInvoke', { method: 'pkg.Svc/Ping', payload }));
 */
export function withTypeName<T extends object>(typeName: string, value: T): T {
  Object.defineProperty(value, TYPE_NAME, {
    value: typeName,
    enumerable: false,
    configurable: true,
  });
  return value;
}
