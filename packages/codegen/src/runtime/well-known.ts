/**
 * The google.protobuf well-known types a .proto may import (any, duration, timestamp, empty,
 * struct, wrappers, field_mask): their TypeScript shapes, in the same representation as
 * generated messages, and their descriptor. Generated modules refer to them as `$rt.Timestamp`
 * and so on instead of generating google/protobuf/*.proto themselves.
 */

/** `google.protobuf.Any`: a packed message and the URL of its type. */
export interface Any {
  typeUrl: string;
  value: Uint8Array;
}

/** `google.protobuf.Duration`: a signed span; `seconds` is a decimal string (int64). */
export interface Duration {
  seconds: string;
  nanos: number;
}

/** `google.protobuf.Timestamp`: seconds (decimal string, int64) and nanos since the Unix epoch. */
export interface Timestamp {
  seconds: string;
  nanos: number;
}

/** `google.protobuf.Empty`: no fields. */
export type Empty = Record<string, never>;

/** `google.protobuf.NullValue`. */
export enum NullValue {
  NULL_VALUE = 0,
}

/** `google.protobuf.Struct`: a JSON object. */
export interface Struct {
  fields: { [key: string]: Value };
}

/** `google.protobuf.Value`: one JSON value; `kind` names the member that is set. */
export interface Value {
  kind?: 'nullValue' | 'numberValue' | 'stringValue' | 'boolValue' | 'structValue' | 'listValue';
  nullValue?: NullValue;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: Struct;
  listValue?: ListValue;
}

/** `google.protobuf.ListValue`: a JSON array. */
export interface ListValue {
  values: Value[];
}

/** `google.protobuf.DoubleValue`. */
export interface DoubleValue {
  value: number;
}
/** `google.protobuf.FloatValue`. */
export interface FloatValue {
  value: number;
}
/** `google.protobuf.Int64Value` (decimal string). */
export interface Int64Value {
  value: string;
}
/** `google.protobuf.UInt64Value` (decimal string). */
export interface UInt64Value {
  value: string;
}
/** `google.protobuf.Int32Value`. */
export interface Int32Value {
  value: number;
}
/** `google.protobuf.UInt32Value`. */
export interface UInt32Value {
  value: number;
}
/** `google.protobuf.BoolValue`. */
export interface BoolValue {
  value: boolean;
}
/** `google.protobuf.StringValue`. */
export interface StringValue {
  value: string;
}
/** `google.protobuf.BytesValue`. */
export interface BytesValue {
  value: Uint8Array;
}

/** `google.protobuf.FieldMask`. */
export interface FieldMask {
  paths: string[];
}

/** The .proto files whose types this module provides; importing any other google/ file is an error. */
export const WELL_KNOWN_FILES: readonly string[] = [
  'google/protobuf/any.proto',
  'google/protobuf/duration.proto',
  'google/protobuf/timestamp.proto',
  'google/protobuf/empty.proto',
  'google/protobuf/struct.proto',
  'google/protobuf/wrappers.proto',
  'google/protobuf/field_mask.proto',
];

/** The file (below google/protobuf/, without `.proto`) each well-known type comes from. */
export const WELL_KNOWN_FILE_OF: Readonly<Record<string, string>> = {
  Any: 'any',
  Duration: 'duration',
  Timestamp: 'timestamp',
  Empty: 'empty',
  Struct: 'struct',
  Value: 'struct',
  ListValue: 'struct',
  NullValue: 'struct',
  DoubleValue: 'wrappers',
  FloatValue: 'wrappers',
  Int64Value: 'wrappers',
  UInt64Value: 'wrappers',
  Int32Value: 'wrappers',
  UInt32Value: 'wrappers',
  BoolValue: 'wrappers',
  StringValue: 'wrappers',
  BytesValue: 'wrappers',
  FieldMask: 'field_mask',
};

const wrapper = (type: string) => ({ edition: 'proto3', fields: { value: { type, id: 1 } } });

/** protobufjs JSON of the types above, field names as in the interfaces. */
export const WELL_KNOWN_DESCRIPTOR = {
  google: {
    nested: {
      protobuf: {
        nested: {
          Any: {
            edition: 'proto3',
            fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } },
          },
          Duration: {
            edition: 'proto3',
            fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } },
          },
          Timestamp: {
            edition: 'proto3',
            fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } },
          },
          Empty: { edition: 'proto3', fields: {} },
          NullValue: { edition: 'proto3', values: { NULL_VALUE: 0 } },
          Struct: {
            edition: 'proto3',
            fields: { fields: { keyType: 'string', type: 'Value', id: 1 } },
          },
          Value: {
            edition: 'proto3',
            oneofs: {
              kind: {
                oneof: [
                  'nullValue',
                  'numberValue',
                  'stringValue',
                  'boolValue',
                  'structValue',
                  'listValue',
                ],
              },
            },
            fields: {
              nullValue: { type: 'NullValue', id: 1 },
              numberValue: { type: 'double', id: 2 },
              stringValue: { type: 'string', id: 3 },
              boolValue: { type: 'bool', id: 4 },
              structValue: { type: 'Struct', id: 5 },
              listValue: { type: 'ListValue', id: 6 },
            },
          },
          ListValue: {
            edition: 'proto3',
            fields: { values: { rule: 'repeated', type: 'Value', id: 1 } },
          },
          DoubleValue: wrapper('double'),
          FloatValue: wrapper('float'),
          Int64Value: wrapper('int64'),
          UInt64Value: wrapper('uint64'),
          Int32Value: wrapper('int32'),
          UInt32Value: wrapper('uint32'),
          BoolValue: wrapper('bool'),
          StringValue: wrapper('string'),
          BytesValue: wrapper('bytes'),
          FieldMask: {
            edition: 'proto3',
            fields: { paths: { rule: 'repeated', type: 'string', id: 1 } },
          },
        },
      },
    },
  },
};
