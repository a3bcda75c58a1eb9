import { StateDecodeError } from '../errors';

/**
 * How one grain kind turns its state into stored bytes and back. Chosen per kind:
 * {@link protobufStateCodec} for a protobuf message type (through the serialization registry),
 * {@link jsonStateCodec} otherwise.
 */
export interface StateCodec<T> {
  /** Shown in errors, e.g. `json` or `protobuf:shop.Cart`. */
  readonly name: string;
  encode(state: T): Uint8Array;
  /** Throws on bytes it cannot turn into a valid `T` (any error; callers wrap it). */
  decode(bytes: Uint8Array): T;
}

/** Decodes stored state of `kind/id`; any failure of the codec becomes a StateDecodeError. */
export function decodeState<T>(
  codec: StateCodec<T>,
  kind: string,
  id: string,
  bytes: Uint8Array,
): T {
  try {
    return codec.decode(bytes);
  } catch (err) {
    throw new StateDecodeError(kind, id, codec.name, { cause: err });
  }
}
