import { ReflectionObject } from 'protobufjs';

/*
 * protobufjs keeps an enum value's options in one object by name, so `A = 0 [(x) = 1, (x) = 2]`
 * reads as `(x) = 2` alone, and an option set twice (which protoc refuses for a non-repeated
 * one) went unseen. While a file parses, each enum value's options are also kept in order.
 */

type SetOption = (this: unknown, name: string, value: unknown, ifNotSet?: boolean) => unknown;

/** The options of each enum value, in the order written, by the object protobufjs keeps. */
const written = new WeakMap<object, Record<string, unknown>[]>();

/** Runs `parse` (one protobufjs parse) keeping every enum value's options in order. */
export function parseWithEnumValueOptions<T>(parse: () => T): T {
  const proto = ReflectionObject.prototype as unknown as { setOption: SetOption };
  const { setOption } = proto;
  proto.setOption = function setOptionInOrder(name, value, ifNotSet) {
    const result = setOption.call(this, name, value, ifNotSet);
    // The parser sets an enum value's options on a plain object standing in for the value.
    const options = (this as { options?: object }).options;
    if (!(this instanceof ReflectionObject) && options !== undefined) {
      written.set(options, [...(written.get(options) ?? []), { [name]: value }]);
    }
    return result;
  };
  try {
    return parse();
  } finally {
    proto.setOption = setOption;
  }
}

/** The options of one enum value (protobufjs's object for them) as written, in order. */
export function enumValueOptionEntries(options: object): Record<string, unknown>[] {
  return written.get(options) ?? Object.entries(options).map(([k, v]) => ({ [k]: v as unknown }));
}
