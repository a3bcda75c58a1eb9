/**
 * The intermediate model both front ends produce: `protoc-gen-granary` builds it from protoc's
 * FileDescriptorProtos, `granary-codegen` from protobufjs's parse of the .proto files. The
 * generator reads only this model, so both commands emit byte-identical modules. Everything in
 * it is plain data in declaration order, with no source positions or comments (the two parsers
 * disagree on those).
 */

import { UnsupportedProtoError } from '../errors';

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
  readonly oneof?: string | undefined;
  /** `optional` on a proto3 scalar: explicit presence. */
  readonly proto3Optional: boolean;
  /** The `packed` option when the .proto sets it (proto2 `[packed = true]`, proto3 `false`). */
  readonly packed?: boolean;
  /** `[default = ...]` of a proto2 scalar or enum field, normalized (see `DefaultValue`). */
  readonly defaultValue?: DefaultValue;
  /** A proto2 group: `type` is the group's nested message, encoded start/end-group delimited. */
  readonly group?: boolean;
}

/**
 * A proto2 default as both front ends normalize it: `bool` a boolean, `string` the text, `bytes`
 * base64, enums the value's name, 32-bit numbers and finite floats a number, 64-bit integers a
 * decimal string, non-finite floats `'inf'`, `'-inf'` or `'nan'`.
 */
export type DefaultValue = string | number | boolean;

/** An extension field (`extend Base { ... }`) of a message that is not a descriptor option. */
export interface ExtensionModel extends FieldModel {
  /** `package.Scope.name`: where it is declared (file package or enclosing message). */
  readonly fullName: string;
  /** Full name of the message it extends. */
  readonly extendee: string;
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
  /** Extensions declared inside this message (`message M { extend Base { ... } }`). */
  readonly extensions: readonly ExtensionModel[];
  /** Declares `extensions N to M;`: other files may add fields to it. */
  readonly extendable: boolean;
  /** The nested type of a proto2 group field (start/end-group delimited on the wire). */
  readonly group: boolean;
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
  /** Extensions declared at file scope (descriptor options excluded: they are never generated). */
  readonly extensions: readonly ExtensionModel[];
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
  /**
   * What granary-codegen warns about as protoc does (an extension number reused in another
   * file); protoc prints its own, so requests from protoc have none.
   */
  readonly warnings?: readonly string[];
}

/** One output file. */
export interface GeneratedFile {
  /** Relative to the output directory, `/` separators. */
  readonly name: string;
  readonly content: string;
}

/**
 * True for the messages of google/protobuf/descriptor.proto (`FileOptions`, `MethodOptions`,
 * `FieldOptions`...): extending them declares a custom option (`google.api.http`, gogoproto,
 * validate rules), which protoc reads and generated code never needs.
 */
export function isOptionExtendee(fullName: string): boolean {
  return fullName.startsWith('google.protobuf.');
}

/**
 * Refuses a MessageSet (`option message_set_wire_format = true;`): protoc's generators encode its
 * extensions as MessageSet items, protobufjs as plain fields, so a generated codec would not be
 * understood by other protobuf implementations. Both commands call this, with the same words;
 * `where` is `file:line:column` of the option when known, else the file.
 */
export function refuseMessageSet(fullName: string, where: string, messageSet: unknown): void {
  if (messageSet !== true) return;
  throw new UnsupportedProtoError(
    `${where}: message ${fullName} uses message_set_wire_format, which granary-codegen does not support`,
  );
}
