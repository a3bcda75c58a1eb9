import type { Field, INamespace, Namespace } from 'protobufjs';

/**
 * The option a generated descriptor sets on a message field that protobufjs would encode as a
 * group: its scope declares a group named as the last part of the field's type (`optional Grp
 * copy = 2` beside `group Grp = 1`), and protobufjs infers the encoding from that name alone.
 * protoc encodes such a field length-prefixed; so must every node.
 */
export const LENGTH_PREFIXED_OPTION = 'granary_length_prefixed';

/** protobufjs keeps a field's resolved encoding here (its `delimited` getter reads it). */
interface FieldFeatures {
  _features?: { message_encoding?: string };
}

/**
 * Sets every field of `nested` (one generated module's descriptor, added to `root` and resolved)
 * that carries LENGTH_PREFIXED_OPTION back to length-prefixed encoding. protobufjs generates a
 * type's encoder on first use, after this runs.
 */
export function applyLengthPrefixed(
  root: Namespace,
  nested: Record<string, INamespace>,
  prefix = '',
): void {
  for (const [name, json] of Object.entries(nested)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    const node = json as INamespace & {
      fields?: Record<string, { options?: Record<string, unknown> }>;
      extend?: string;
      options?: Record<string, unknown>;
    };
    for (const [fieldName, field] of Object.entries(node.fields ?? {})) {
      if (field.options?.[LENGTH_PREFIXED_OPTION] === true) {
        lengthPrefixed(root.lookupType(path).fields[fieldName]);
      }
    }
    if (node.extend !== undefined && node.options?.[LENGTH_PREFIXED_OPTION] === true) {
      lengthPrefixed(root.lookup(path) as Field); // its copy on the extendee shares the features
    }
    if (node.nested !== undefined) applyLengthPrefixed(root, node.nested, path);
  }
}

function lengthPrefixed(field: Field): void {
  const features = (field as unknown as FieldFeatures)._features;
  if (features !== undefined) features.message_encoding = 'LENGTH_PREFIXED';
}
