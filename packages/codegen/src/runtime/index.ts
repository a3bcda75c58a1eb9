export type {
  CallOptions,
  ClusterLike,
  ClusterRequestOptions,
  InvokeContext,
} from './cluster-like';
export {
  InvalidReplyError,
  MissingResponseError,
  PayloadDecodeError,
  UnimplementedError,
  WrongMessageTypeError,
} from './errors';
export { GrainBase, unimplemented } from './grain-base';
export { GrainClient } from './grain-client';
export {
  GRAIN_INVOKE_RESULT_TYPE,
  GRAIN_INVOKE_TYPE,
  grainInvoke,
  grainInvokeResult,
  isGrainInvoke,
  isGrainInvokeResult,
  payloadOf,
} from './grain-invoke';
export type { GrainInvoke, GrainInvokeResult } from './grain-invoke';
export { ProtobufMessageCodec } from './message-codec';
export type { MessageCodec, MessageInit } from './message-codec';
export { codecOf, defineProtoFile } from './proto-file';
export type { ProtoFile, TypeRegistry } from './proto-file';
export { defineService, definedServices, method } from './service';
export type { MethodDefinition, ServiceDefinition } from './service';
export { TYPE_NAME_TAG, tagTypeName, typeNameOf } from './type-tag';
export { NullValue } from './well-known';
export type {
  Any,
  BoolValue,
  BytesValue,
  DoubleValue,
  Duration,
  Empty,
  FieldMask,
  FloatValue,
  Int32Value,
  Int64Value,
  ListValue,
  StringValue,
  Struct,
  Timestamp,
  UInt32Value,
  UInt64Value,
  Value,
} from './well-known';
