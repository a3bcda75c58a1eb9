import { Namespace, Root, type Type } from 'protobufjs';
import type { INamespace } from 'protobufjs';
import { resetCompletionPlans, withoutFilledDefaults } from './completion';
import { resetFieldPlans } from './field-check';
import { resetLongPlans } from './long-check';
import { UnimplementedError } from './errors';
import { GRAIN_INVOKE_DESCRIPTOR } from './grain-invoke';
import { applyLengthPrefixed } from './length-prefixed';
import { ProtobufMessageCodec } from './message-codec';
import type { MessageCodec } from './message-codec';
import { WELL_KNOWN_DESCRIPTOR } from './well-known';

/**
 * The part of the serialization registry of @granary/core (`serialization`) generated code
 * uses, typed structurally so the runtime builds without it.
 */
export interface TypeRegistry {
  /**
   * `toEncodable` gives what protobufjs should encode for a plain object of the type (a
   * `create()`d message without the proto2 defaults it filled in); a registry without it
   * encodes those defaults as if set.
   */
  registerType(type: Type, toEncodable?: (message: object) => object): void;
  /** Rebuilds errors with `code` as `errorClass` on arrival from another node (core has it). */
  registerErrorClass?(code: string, errorClass: abstract new (...args: never[]) => Error): void;
}

/** The types of one generated module, looked up by full name. */
export interface ProtoFile {
  /** The .proto file name the module was generated from. */
  readonly name: string;
  /** Full names (no leading dot) of the message types the file declares. */
  readonly messageTypes: readonly string[];
  /** The codec of message `fullName` (declared in this file or one it imports). */
  codec<T>(fullName: string): MessageCodec<T>;
}

/**
 * One protobufjs Root per process holds the types of every generated module, so a module's
 * types resolve references into the modules it imports (which Node loads first) without any
 * .proto file at run time. It starts with the grain-call envelope and the well-known types.
 */
const sharedRoot = new Root().addJSON(GRAIN_INVOKE_DESCRIPTOR).addJSON(WELL_KNOWN_DESCRIPTOR);
const BUILTIN_MESSAGE_TYPES = messageNames(GRAIN_INVOKE_DESCRIPTOR, '').concat(
  messageNames(WELL_KNOWN_DESCRIPTOR, ''),
);

const UNIMPLEMENTED_CODE = 'ERR_UNIMPLEMENTED';
const files = new Map<string, ProtoFile>();
const registries = new WeakSet<TypeRegistry>();

/**
 * Adds the types of one generated module (`descriptor`: protobufjs JSON of its namespaces) to
 * the shared root and registers its message types with `registry` under their full names; once
 * per registry also the grain-call envelope, the well-known types and `UnimplementedError`.
 * Called once at the top of each generated module; a second call for the same file (two
 * copies of a module) returns the first definition.
 */
export function defineProtoFile(
  registry: TypeRegistry,
  name: string,
  descriptor: Record<string, unknown>,
): ProtoFile {
  const nested = descriptor as Record<string, INamespace>;
  let file = files.get(name);
  if (file === undefined) {
    addNested(sharedRoot, withNumericDefaults(nested));
    sharedRoot.resolveAll();
    applyLengthPrefixed(sharedRoot, nested);
    resetCompletionPlans(); // its extensions may have added fields to types planned before
    resetLongPlans();
    resetFieldPlans();
    file = {
      name,
      messageTypes: messageNames(nested, ''),
      codec: <T>(fullName: string) => new ProtobufMessageCodec<T>(sharedRoot.lookupType(fullName)),
    };
    files.set(name, file);
  }
  if (!registries.has(registry)) {
    registries.add(registry);
    registry.registerErrorClass?.(UNIMPLEMENTED_CODE, UnimplementedError);
    // No proto2 defaults in these: registered plain, off the grain call's hot path.
    for (const typeName of BUILTIN_MESSAGE_TYPES) {
      registry.registerType(sharedRoot.lookupType(typeName));
    }
  }
  for (const typeName of file.messageTypes) register(registry, typeName);
  return file;
}

/**
 * Registers a type of the shared root with `registry`, so that a `create()`d message sent with
 * `cluster.send` / `ctx.respond` (encoded by the registry, not by its codec) leaves the proto2
 * defaults `create` filled in off the wire, as `encode` does: the receiver sees them unset.
 */
function register(registry: TypeRegistry, typeName: string): void {
  const type = sharedRoot.lookupType(typeName);
  registry.registerType(type, (message) =>
    withoutFilledDefaults(type, message as Record<string, unknown>),
  );
}

/** The codec of a message type already in the shared root (e.g. a well-known type). */
export function codecOf<T>(fullName: string): MessageCodec<T> {
  return new ProtobufMessageCodec<T>(sharedRoot.lookupType(fullName));
}

/**
 * Adds a module's namespaces to the shared root, descending into the package namespaces that
 * already exist instead of letting `addJSON` replace them: protobufjs merges a re-declared
 * namespace by moving every object into a new one, which drops the resolved features of the
 * extension fields it moves (a packed extension would then encode unpacked).
 */
function addNested(ns: Namespace, nested: Record<string, INamespace>): void {
  for (const [name, json] of Object.entries(nested)) {
    const isPackage = !('fields' in json || 'values' in json || 'methods' in json || 'id' in json);
    const existing = ns.get(name);
    if (isPackage && (existing === null || existing.constructor === Namespace)) {
      addNested(existing === null ? ns.define(name) : (existing as Namespace), json.nested ?? {});
    } else {
      ns.addJSON({ [name]: json });
    }
  }
}

/** JSON has no Infinity or NaN: generated descriptors write float defaults as these words. */
const NON_FINITE: Record<string, number> = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/**
 * `descriptor` with the non-finite float defaults (`'inf'`, `'-inf'`, `'nan'`) as numbers,
 * which is what protobufjs expects; changed in place (it is the generated module's own literal).
 */
function withNumericDefaults(nested: Record<string, INamespace>): Record<string, INamespace> {
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const field = node as { type?: unknown; options?: { default?: unknown } };
    const value = field.options?.default;
    if ((field.type === 'double' || field.type === 'float') && typeof value === 'string') {
      field.options = { ...field.options, default: NON_FINITE[value] };
    }
    for (const child of Object.values(node)) visit(child);
  };
  visit(nested);
  return nested;
}

/** Full names of every message type in a protobufjs JSON namespace, depth first. */
function messageNames(
  nested: Record<string, INamespace> | undefined,
  prefix: string,
  names: string[] = [], // filled in place: a package's names spread into push() can overflow the stack
): string[] {
  for (const [key, value] of Object.entries(nested ?? {})) {
    const fullName = prefix === '' ? key : `${prefix}.${key}`;
    if ('fields' in value) names.push(fullName);
    messageNames(value.nested as Record<string, INamespace> | undefined, fullName, names);
  }
  return names;
}
