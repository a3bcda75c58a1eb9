/**
 * The intermediate model both front ends produce: `protoc-gen-granary` builds it from protoc's
 * FileDescriptorProtos, `granary-codegen` from protobufjs's parse of the .proto files. The
 * generator reads only this model, so both commands emit byte-identical modules. Everything in
 * it is plain data in declaration order, with no source positions or comments (the two parsers
 * disagree on those).
 */

/** The protobuf scalar types, named as in .proto source. */
export type ScalarType =
  | 'double'
  | 'float'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'uint64'
  | 'sint32'
  | 'sint64'
  | 'fixed32'
  | 'fixed64'
  | 'sfixed32'
  | 'sfixed64'
  | 'bool'
  | 'string'
  | 'bytes';

/** Every scalar type name, for validation and lookups. */
export const SCALAR_TYPES: readonly ScalarType[] = [
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
];

/** The type of a field or map value: a scalar, or a message or enum by full name (no leading dot). */
export type TypeRef =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'message' | 'enum'; readonly fullName: string };

/** One field of a message. */
export interface FieldModel {
  /** The name as written in the .proto file (snake_case usually). */
  readonly name: string;
  readonly number: number;
  /** `map` fields have `mapKey` set and `type` is the value type. */
  readonly label: 'optional' | 'required' | 'repeated' | 'map';
  readonly type: TypeRef;
  /** Key type of a `map<K, V>` field. */
  readonly mapKey?: ScalarType;
  /** Name of the (real, non-synthetic) oneof this field belongs to. */
  readonly oneof?: string;
  /** `optional` on a proto3 scalar: explicit presence. */
  readonly proto3Optional: boolean;
}

/** A message type, with its nested types (map entry types are not listed: maps are fields). */
export interface MessageModel {
  readonly name: string;
  readonly fullName: string;
  readonly fields: readonly FieldModel[];
  /** Real oneofs in declaration order; proto3 `optional` synthetic oneofs are left out. */
  readonly oneofs: readonly string[];
  readonly messages: readonly MessageModel[];
  readonly enums: readonly EnumModel[];
}

/** An enum type. */
export interface EnumModel {
  readonly name: string;
  readonly fullName: string;
  readonly values: readonly { readonly name: string; readonly number: number }[];
}

/** One rpc of a service. */
export interface MethodModel {
  readonly name: string;
  /** Full names, no leading dot. */
  readonly inputType: string;
  readonly outputType: string;
  readonly clientStreaming: boolean;
  readonly serverStreaming: boolean;
}

/** A service: one grain kind. */
export interface ServiceModel {
  readonly name: string;
  readonly fullName: string;
  readonly methods: readonly MethodModel[];
}

/** One .proto file. */
export interface FileModel {
  /** Path relative to its include root, with `/` separators, as protoc names it (`shop/orders.proto`). */
  readonly name: string;
  /** Empty for a package-less file. */
  readonly package: string;
  readonly syntax: 'proto2' | 'proto3';
  readonly messages: readonly MessageModel[];
  readonly enums: readonly EnumModel[];
  readonly services: readonly ServiceModel[];
}

/** Where a named type is declared: what the generator needs to import it from another module. */
export interface TypeLocation {
  readonly fullName: string;
  readonly kind: 'message' | 'enum';
  /** The declaring file's name and package. */
  readonly file: string;
  readonly package: string;
}

/** A generation request: the files to generate and an index of every type they can see. */
export interface CodegenRequest {
  readonly files: readonly FileModel[];
  /** Every message and enum of every loaded file (dependencies included), by full name. */
  readonly types: ReadonlyMap<string, TypeLocation>;
}

/** One output file. */
export interface GeneratedFile {
  /** Relative to the output directory, `/` separators. */
  readonly name: string;
  readonly content: string;
}
