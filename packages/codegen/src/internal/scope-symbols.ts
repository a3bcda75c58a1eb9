import { Enum, MapField, Namespace, OneOf, Service, Type } from 'protobufjs';
import type { ReflectionObject } from 'protobufjs';
import { unescapeFullName } from './reflection-to-model';
import { unescapeIdentifier } from './proto-source';

/*
 * protoc keeps one symbol table per scope (a package or a message): its fields, oneofs, nested
 * types, enums, services, extensions, the entry type each map field expands to, and the values
 * of its enums (scoped like C++ enumerators, beside the enum rather than in it). protobufjs
 * keeps these in separate objects and never compares them, so it read files protoc refuses
 * ('"a" is already defined in "p.M"'); these checks find them.
 */

/** What is already defined as `name` in `scope` (`a field`, `message p.M`...), if anything. */
function symbolIn(scope: Namespace, name: string): string | undefined {
  if (scope instanceof Type) {
    if (Object.hasOwn(scope.fields, name)) return `field ${name}`;
    if (Object.hasOwn(scope.oneofs ?? {}, name)) return `oneof ${name}`;
    const entry = scope.fieldsArray.find(
      (f) => f instanceof MapField && mapEntryName(f.name) === name,
    );
    if (entry !== undefined) return `the entry type of map field ${entry.name}`;
  }
  const nested = scope.nested ?? {};
  if (!Object.hasOwn(nested, name)) return undefined;
  return `${kindOf(nested[name])} ${full(nested[name].fullName)}`;
}

/** What `obj` is, as protoc's messages name it: `message`, `enum`, `service`, `package`... */
export function kindOf(obj: ReflectionObject): string {
  if (obj instanceof Type) return 'message';
  if (obj instanceof Enum) return 'enum';
  if (obj instanceof Service) return 'service';
  if (obj instanceof OneOf) return 'oneof';
  return obj instanceof Namespace ? 'package' : 'extension';
}

/**
 * Enum values share the enclosing scope: two enums of one scope cannot both have `UNKNOWN`,
 * and no value may take the name of a field, message, service... of that scope.
 */
export class EnumValueScopes {
  private readonly owners = new Map<string, string>(); // `scope.VALUE` → the enum that has it

  /** Records the values of `e`; what is wrong when one is already taken in its scope. */
  add(e: Enum): string | undefined {
    const scope = full(e.parent?.fullName ?? '');
    const where = scope || 'the file';
    for (const value of Object.keys(e.values)) {
      const key = scope === '' ? value : `${scope}.${value}`;
      const owner = this.owners.get(key);
      if (owner !== undefined && owner !== e.fullName) {
        return `value ${value} is already defined in ${where} by enum ${full(owner)} (enum values share the enclosing scope)`;
      }
      this.owners.set(key, e.fullName);
      const taken = e.parent === null ? undefined : symbolIn(e.parent, value);
      if (taken !== undefined) {
        return `value ${unescapeIdentifier(value)} is already defined in ${where} as ${taken} (enum values share the enclosing scope)`;
      }
    }
    return undefined;
  }
}

/**
 * What is wrong with the entry types the map fields of `type` expand to (`map<..> items` →
 * `ItemsEntry`): one named as another declaration of the message, or two maps with one name.
 */
export function mapEntryProblem(type: Type): string | undefined {
  const seen = new Map<string, string>();
  for (const f of type.fieldsArray) {
    if (!(f instanceof MapField)) continue;
    const entry = mapEntryName(f.name);
    const other = seen.get(entry);
    if (other !== undefined) {
      return `map fields ${other} and ${f.name} both expand to entry type ${entry}`;
    }
    seen.set(entry, f.name);
    const nested = type.nested ?? {};
    const taken = Object.hasOwn(type.fields, entry)
      ? `field ${entry}`
      : Object.hasOwn(nested, entry)
        ? `${kindOf(nested[entry])} ${full(nested[entry].fullName)}`
        : undefined;
    if (taken !== undefined) {
      return `map field ${f.name} expands to entry type ${entry}, which is already defined as ${taken}`;
    }
  }
  return undefined;
}

/** protoc's name for the entry type of map field `name`: `by_key` → `ByKeyEntry`. */
function mapEntryName(name: string): string {
  return `${name.replace(/(?:^|_)([a-z]?)/g, (_m, c: string) => c.toUpperCase())}Entry`;
}

function full(fullName: string): string {
  return unescapeFullName(fullName, unescapeIdentifier);
}
