import { Enum, Field, MapField, Type } from 'protobufjs';
import type { Namespace } from 'protobufjs';
import { rawOptionValue, rawValueProblem } from './raw-option-values';

/*
 * An option's value against the type of the option (or of the field of its message a path or
 * an aggregate names), as protoc reads it: text format's field names (a group by its type's
 * name), enum values by name or number, strings only for string and bytes fields.
 */

const FLOAT_WORDS = new Set(['inf', '-inf', 'nan', 'infinity', '-infinity']);

/**
 * What is wrong with `value` for `field` (a message field's value recursively), if anything.
 * `scope`: where the option is declared, which an aggregate's `[ext.name]` resolves from.
 */
export function valueProblem(
  field: Field,
  value: unknown,
  path: string,
  scope?: Namespace,
): string | undefined {
  if (Array.isArray(value)) {
    // protobufjs gathers `name: "x" name: "y"` (or `(o).name` set twice) into a list.
    if (!field.repeated && !(field instanceof MapField)) {
      return `${path}: non-repeated field is set more than once`;
    }
    for (const item of value) {
      const problem = valueProblem(field, item, path, scope);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const raw = rawOptionValue(value);
  if (raw !== undefined) return rawValueProblem(field, raw, path);
  if (field instanceof MapField) return mapEntryProblem(field, value, path, scope);
  const type = field.resolve().resolvedType;
  if (type instanceof Type) return messageProblem(type, value, path, scope);
  if (type instanceof Enum) {
    if (typeof value === 'number' || (typeof value === 'string' && value in type.values)) {
      return undefined;
    }
    return `${path}: enum ${type.fullName.slice(1)} has no value named ${String(value)}`;
  }
  return scalarProblem(field.type, value, path);
}

function messageProblem(
  type: Type,
  value: unknown,
  path: string,
  scope: Namespace | undefined,
): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return `${path}: a ${type.fullName.slice(1)} value must be a message ({ ... })`;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (key.startsWith('[')) {
      const problem = extensionProblem(type, key, inner, path, scope);
      if (problem !== undefined) return problem;
      continue;
    }
    // A group is written by its type's name (`Meta { ... }`), which protobufjs's field name
    // starts in lower case; protobufjs's bundled well-known types have camelCase field names.
    const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    const group = key.charAt(0).toLowerCase() + key.slice(1);
    const field = (type.fields[key] ?? type.fields[camel] ?? type.fields[group]) as
      Field | undefined;
    if (field === undefined) {
      return `${path}: message ${type.fullName.slice(1)} has no field named "${key}"`;
    }
    const problem = valueProblem(field, inner, `${path}.${key}`, scope);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * An aggregate's `[name]: value` of message `type`: protoc resolves `name` (no leading dot) from
 * the option's scope, to an extension of `type`, and checks the value against it. An Any's type
 * URL (`[type.googleapis.com/x.Y]`) is left alone.
 */
function extensionProblem(
  type: Type,
  key: string,
  value: unknown,
  path: string,
  scope: Namespace | undefined,
): string | undefined {
  const name = key.slice(1, -1).replace(/\s+/g, '');
  if (name.includes('/') || scope === undefined) return undefined;
  if (name.startsWith('.'))
    return `${path}: [${name}]: an extension is named without a leading dot`;
  const isExtension = (o: unknown): o is Field => o instanceof Field && o.extend !== undefined;
  const near = scope.lookup(name);
  const ext = isExtension(near) ? near : scope.root.lookup(name);
  if (!isExtension(ext) || ext.extensionField?.parent !== type) {
    return `${path}: extension "${name}" is not defined or is not an extension of "${type.fullName.slice(1)}"`;
  }
  return valueProblem(ext, value, `${path}.[${name}]`, scope);
}

function mapEntryProblem(
  field: MapField,
  value: unknown,
  path: string,
  scope: Namespace | undefined,
): string | undefined {
  if (typeof value !== 'object' || value === null)
    return `${path}: a map entry must be { key value }`;
  const entry = value as Record<string, unknown>;
  const unknown = Object.keys(entry).find((k) => k !== 'key' && k !== 'value');
  if (unknown !== undefined) return `${path}: a map entry has no field named "${unknown}"`;
  const type = field.resolvedType;
  if (entry['value'] === undefined) return undefined;
  if (type instanceof Type) return messageProblem(type, entry['value'], `${path}.value`, scope);
  if (type instanceof Enum) return undefined;
  return scalarProblem(field.type, entry['value'], `${path}.value`);
}

function scalarProblem(type: string, value: unknown, path: string): string | undefined {
  const ok =
    type === 'string' || type === 'bytes'
      ? typeof value === 'string'
      : type === 'bool'
        ? typeof value === 'boolean' || value === 0 || value === 1
        : typeof value === 'number' ||
          (typeof value === 'string' &&
            ((type === 'double' || type === 'float') && FLOAT_WORDS.has(value.toLowerCase())
              ? true
              : /^-?(?:0x[0-9a-f]+|\d+)$/i.test(value)));
  return ok ? undefined : `${path}: ${JSON.stringify(value)} is not a ${type}`;
}
