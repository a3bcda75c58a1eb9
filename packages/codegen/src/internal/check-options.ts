import { Enum, Field, Namespace, Root, Service, Type } from 'protobufjs';
import type { ReflectionObject } from 'protobufjs';
import { ProtoParseError } from '../errors';
import { valueProblem } from './option-values';
import { enumValueOptionEntries } from './enum-value-options';
import { locationOf, quote } from './source-location';

/*
 * Options as protoc checks them: a name it does not know (a typo in `java_pakage`, a custom
 * option whose file is not imported, `(nope.x)`), a field an aggregate value's message does not
 * have, an enum value that does not exist, a string where a number goes. protobufjs's parser
 * keeps any option as written; granary-codegen leaves options out of the generated code, but
 * must not accept a file protoc refuses.
 */

/** The options message each kind of declaration takes. */
const OPTIONS_OF = new Map<string, string>([
  ['file', 'FileOptions'],
  ['message', 'MessageOptions'],
  ['field', 'FieldOptions'],
  ['oneof', 'OneofOptions'],
  ['enum', 'EnumOptions'],
  ['enum value', 'EnumValueOptions'],
  ['service', 'ServiceOptions'],
  ['rpc', 'MethodOptions'],
  ['extension range', 'ExtensionRangeOptions'],
]);

/**
 * The builtin option only an editions file may set: protoc refuses `features` in a proto2 or
 * proto3 file, and granary-codegen does not generate editions files (UnsupportedProtoError).
 * The other options newer than protoc 3.21 (`retention`, `targets`, `debug_redact`,
 * `verification`, `declaration`, `deprecated_legacy_json_field_conflicts`...) are accepted:
 * protoc 22 and later take them in proto2 and proto3 files, real-world files use them, and like
 * every option they change nothing in the generated code.
 */
const EDITIONS_ONLY = 'features';

/** Options protobufjs records that are no options message's fields (field syntax it keeps there). */
const PARSER_OPTIONS = new Set(['default', 'json_name', 'proto3_optional']);
/** Builtin options older protoc versions still accept and the bundled descriptor dropped. */
const RETIRED_OPTIONS = new Set(['php_generic_services']);

/** One declaration's options, as protobufjs parsed them, with where they are. */
export interface DeclaredOptions {
  readonly kind: string;
  /** The scope custom option names resolve from (the declaration's parent for a field). */
  readonly scope: Namespace;
  readonly file: string;
  readonly options: readonly Record<string, unknown>[];
  /** The line (from 1) where the declaration is, when known: its error is found from there. */
  readonly line?: number;
}

/**
 * Throws a ProtoParseError (`file:line:column: option ...`) at the first option protoc refuses.
 * `visible(file)`: the files whose extensions `file` may use (itself, its imports, and what they
 * re-export); `sources`: the files' text, for the line.
 */
export function checkOptions(
  declared: readonly DeclaredOptions[],
  descriptor: Root,
  visible: (file: string) => ReadonlySet<string>,
  sources: ReadonlyMap<string, string>,
): void {
  for (const { kind, scope, file, options, line } of declared) {
    const optionsType = descriptor.lookupType(`google.protobuf.${OPTIONS_OF.get(kind) ?? ''}`);
    // protoc refuses a non-repeated option set twice on one declaration (`[(x) = 1, (x) = 2]`).
    const set = new Set<string>();
    for (const entry of options) {
      for (const [written, inner] of Object.entries(entry)) {
        const [name, value] = unflatten(written, inner);
        const field = optionField(name, scope, optionsType);
        // `(o)`, `(p.o)` and `(.p.o)` name one extension: keyed by its full name.
        const key =
          field !== undefined && written.startsWith('(')
            ? `(${field.fullName})${written.slice(written.indexOf(')') + 1)}`
            : written;
        const again =
          set.has(key) &&
          (typeof inner !== 'object' || inner === null) &&
          field?.repeated === false;
        set.add(key);
        const problem = again
          ? `option "${name}" was already set`
          : optionProblem(name, value, kind, scope, optionsType, visible(file), file);
        if (problem === undefined) continue;
        const custom = /^\(([^)]*)\)/.exec(name)?.[1];
        const at =
          custom === undefined
            ? new RegExp(`\\b${quote(name)}(?:\\s*\\.\\s*\\w+)*\\s*=`)
            : new RegExp(`\\(\\s*\\.?${quote(custom.replace(/^\./, ''))}\\s*\\)`);
        const source = sources.get(file);
        const from = line === undefined ? 0 : lineStart(source ?? '', line);
        throw new ProtoParseError(`${locationOf(file, source, at, 0, from)}: ${problem}`);
      }
    }
  }
}

/** The offset where line `line` (from 1) of `source` starts. */
function lineStart(source: string, line: number): number {
  let at = 0;
  for (let n = 1; n < line && at >= 0; n++) at = source.indexOf('\n', at) + 1 || -1;
  return Math.max(at, 0);
}

/**
 * `(a.b).c.d = 5` as `(a.b) = { c { d: 5 } }` (protobufjs keeps an enum value's options by their
 * written names; the other declarations' parsed options are nested already).
 */
function unflatten(name: string, value: unknown): [string, unknown] {
  const match = /^(\([^)]*\)|[^.(]+)((?:\.\w+)+)$/.exec(name);
  if (match === null) return [name, value];
  const path = match[2].slice(1).split('.');
  return [match[1], path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value)];
}

function optionProblem(
  name: string,
  value: unknown,
  kind: string,
  scope: Namespace,
  optionsType: Type,
  visible: ReadonlySet<string>,
  file: string,
): string | undefined {
  if (kind === 'field' && PARSER_OPTIONS.has(name)) return undefined;
  const custom = /^\(([^)]*)\)$/.exec(name)?.[1];
  if (custom === undefined) {
    if (RETIRED_OPTIONS.has(name)) return undefined;
    const field = optionsType.fields[name] as Field | undefined;
    if (field === undefined) {
      return `option "${name}" unknown: google.protobuf.${optionsType.name} has no such field`;
    }
    // The descriptor.proto protobufjs ships, read for options, uses it itself.
    if (name === EDITIONS_ONLY && !file.startsWith('google/protobuf/')) {
      return `option "${name}" is for editions files: protoc refuses it in a proto2 or proto3 file`;
    }
    return valueProblem(field, value, `option "${name}"`, scope);
  }
  const ext = scope.lookup(custom.replace(/^\./, '')) ?? scope.root.lookup(custom);
  const extendee = ext instanceof Field ? ext.extensionField?.parent : undefined;
  const fullName = ext?.fullName.slice(1) ?? custom;
  if (!(ext instanceof Field) || ext.extend === undefined || !(extendee instanceof Type)) {
    return `option "(${custom})" unknown: no extension of google.protobuf.${optionsType.name} has that name (is its file imported?)`;
  }
  if (extendee.fullName !== `.google.protobuf.${optionsType.name}`) {
    return `option "(${custom})" extends ${extendee.fullName.slice(1)}, not google.protobuf.${optionsType.name}: it does not apply to a ${kind}`;
  }
  if (ext.filename !== null && !visible.has(ext.filename)) {
    return `option "(${fullName})" is defined in ${ext.filename}, which is not imported`;
  }
  return valueProblem(ext, value, `option "(${fullName})"`, scope);
}

/** The field of `optionsType` (or extension of it) that option `name` sets, when it resolves. */
function optionField(name: string, scope: Namespace, optionsType: Type): Field | undefined {
  const custom = /^\(([^)]*)\)$/.exec(name)?.[1];
  if (custom === undefined) return optionsType.fields[name] as Field | undefined;
  const ext = scope.lookup(custom.replace(/^\./, '')) ?? scope.root.lookup(custom);
  return ext instanceof Field ? ext : undefined;
}

/** The options of every declaration below `ns` (file options are gathered per file elsewhere). */
export function declaredOptionsBelow(
  ns: Namespace,
  out: DeclaredOptions[] = [], // filled in place: spread into push() it can overflow the stack
): DeclaredOptions[] {
  const add = (
    kind: string,
    obj: ReflectionObject,
    scope: Namespace | null,
    file = obj.filename,
  ): void => {
    const options = (obj.parsedOptions ?? []) as Record<string, unknown>[];
    if (options.length > 0 && file !== null && scope !== null) {
      out.push({ kind, scope, file, options });
    }
  };
  for (const nested of ns.nestedArray) {
    if (nested instanceof Type) {
      add('message', nested, nested);
      for (const f of nested.fieldsArray) if (f.declaringField === null) add('field', f, nested);
      for (const o of nested.oneofsArray) add('oneof', o, nested, nested.filename);
    } else if (nested instanceof Enum) {
      add('enum', nested, nested.parent);
      for (const options of Object.values(nested.valuesOptions ?? {})) {
        const entries = enumValueOptionEntries(options as object);
        if (nested.filename !== null && nested.parent !== null && entries.length > 0) {
          out.push({
            kind: 'enum value',
            scope: nested.parent,
            file: nested.filename,
            options: entries,
          });
        }
      }
    } else if (nested instanceof Service) {
      add('service', nested, nested);
      for (const m of nested.methodsArray) add('rpc', m, nested);
    } else if (nested instanceof Field) {
      add('field', nested, ns);
    }
    if (nested instanceof Namespace) declaredOptionsBelow(nested, out);
  }
  return out;
}

/**
 * The options a file declares at its top: protobufjs adds them to its package's namespace,
 * which files of one package share, so each file takes those added since the previous one.
 */
export function fileOptionsOf(
  root: Root,
  pkg: string | undefined,
  file: string,
  consumed: Map<Namespace, number>,
): DeclaredOptions {
  const found = pkg === undefined || pkg === '' ? root : root.lookup(pkg);
  const ns = found instanceof Namespace ? found : root;
  const all = (ns.parsedOptions ?? []) as Record<string, unknown>[];
  const options = all.slice(consumed.get(ns) ?? 0);
  consumed.set(ns, all.length);
  return { kind: 'file', scope: ns, file, options };
}

let bundledDescriptor: Root | undefined;

/** A root with google.protobuf's options messages: `root`'s own, or protobufjs's copy. */
export function optionsDescriptor(root: Root): Root {
  if (root.lookup('google.protobuf.FileOptions') !== null) return root;
  bundledDescriptor ??= new Root().loadSync(
    require.resolve('protobufjs/google/protobuf/descriptor.proto'),
    { keepCase: true },
  );
  return bundledDescriptor;
}
