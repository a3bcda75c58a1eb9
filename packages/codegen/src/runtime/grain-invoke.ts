import { tagTypeName, typeNameOf } from './type-tag';

/** Type name of an rpc call on the wire. */
export const GRAIN_INVOKE_TYPE = 'granary.GrainInvoke';
/** Type name of an rpc reply on the wire. */
export const GRAIN_INVOKE_RESULT_TYPE = 'granary.GrainInvokeResult';

/** An rpc call: the method identity (`package.Service/Method`) and the encoded request. */
export interface GrainInvoke {
  readonly method: string;
  readonly payload: Uint8Array;
}

/** An rpc reply: the encoded response. */
export interface GrainInvokeResult {
  readonly payload: Uint8Array;
}

/**
 * The protobufjs JSON descriptor of both messages, registered with the serialization registry
 * so calls between nodes travel as protobuf rather than JSON.
 */
export const GRAIN_INVOKE_DESCRIPTOR = {
  granary: {
    nested: {
      GrainInvoke: {
        edition: 'proto3',
        fields: { method: { type: 'string', id: 1 }, payload: { type: 'bytes', id: 2 } },
      },
      GrainInvokeResult: {
        edition: 'proto3',
        fields: { payload: { type: 'bytes', id: 1 } },
      },
    },
  },
};

/** A tagged `granary.GrainInvoke`. */
export function grainInvoke(method: string, payload: Uint8Array): GrainInvoke {
  return tagTypeName(GRAIN_INVOKE_TYPE, { method, payload });
}

/** A tagged `granary.GrainInvokeResult`. */
export function grainInvokeResult(payload: Uint8Array): GrainInvokeResult {
  return tagTypeName(GRAIN_INVOKE_RESULT_TYPE, { payload });
}

/**
 * The payload of a decoded envelope as bytes. A zero-length payload is not on the wire in
 * proto3, and protobufjs then hands back its shared default (an empty plain array), not a
 * `Uint8Array`; an absent payload is empty too.
 */
export function payloadOf(message: { readonly payload?: unknown }): Uint8Array | undefined {
  const payload = message.payload;
  if (payload instanceof Uint8Array) return payload;
  if (payload === undefined || (Array.isArray(payload) && payload.length === 0)) {
    return EMPTY_PAYLOAD;
  }
  return undefined;
}

const EMPTY_PAYLOAD = new Uint8Array(0);

/**
 * True when `message` is a `granary.GrainInvoke`: tagged here, decoded by a peer's registry
 * (protobufjs `$type`), or an untagged object of that shape.
 */
export function isGrainInvoke(message: unknown): message is GrainInvoke {
  return (
    typeof message === 'object' &&
    message !== null &&
    (typeNameOf(message) ?? GRAIN_INVOKE_TYPE) === GRAIN_INVOKE_TYPE &&
    typeof (message as GrainInvoke).method === 'string' &&
    payloadOf(message as GrainInvoke) !== undefined
  );
}

/** True when `message` is a `granary.GrainInvokeResult` (tagged, or untagged of that shape). */
export function isGrainInvokeResult(message: unknown): message is GrainInvokeResult {
  if (typeof message !== 'object' || message === null) return false;
  const typeName = typeNameOf(message);
  if (typeName === GRAIN_INVOKE_RESULT_TYPE) return payloadOf(message) !== undefined;
  return typeName === undefined && (message as GrainInvokeResult).payload instanceof Uint8Array;
}
