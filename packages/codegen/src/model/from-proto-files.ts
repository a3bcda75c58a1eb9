import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { Enum, Field, Method, Namespace, Root, Service, Type, common, parse } from 'protobufjs';
import type { IParserResult, ReflectionObject } from 'protobufjs';
import { ProtoParseError, UnsupportedProtoError } from '../errors';
import {
  escapeProtoSource,
  normalizeHexPrefix,
  unescapeIdentifier,
} from '../internal/proto-source';
import { normalizeAggregates } from '../internal/aggregate-options';
import { normalizeDottedNames } from '../internal/dotted-names';
import { extensionRangeOptions } from '../internal/range-options';
import { refuseMessageSets } from '../internal/message-sets';
import { checkRangeStatements } from '../internal/check-range-statements';
import { checkEmptyExtends } from '../internal/check-empty-extends';
import { parseWithEnumValueOptions } from '../internal/enum-value-options';
import { captureRawOptionValues } from '../internal/raw-option-values';
import { checkDeclarations } from '../internal/check-declarations';
import { checkImports, visibleFiles } from '../internal/check-imports';
import {
  checkOptions,
  declaredOptionsBelow,
  fileOptionsOf,
  optionsDescriptor,
} from '../internal/check-options';
import type { DeclaredOptions } from '../internal/check-options';
import { checkImportPath, checkImportsListedOnce } from '../internal/import-path';
import { locate, locateBelow, readSource } from '../internal/locate-proto';
import { parseErrorMessage } from '../internal/parse-error';
import { parseWithOneofGroups } from '../internal/oneof-groups';
import { parseWithSyntheticOneofs } from '../internal/synthetic-oneofs';
import {
  buildOrder,
  extensionNumberWarnings,
  parseWithExtensionNumbers,
} from '../internal/extension-numbers';
import type { ExtensionNumberClash } from '../internal/extension-numbers';
import { checkRelativeNames } from '../internal/check-relative-names';
import {
  declarationLocation,
  firstUnresolved,
  importLocation,
  locationOf,
} from '../internal/source-location';
import { normalizeStringLiterals } from '../internal/string-literals';
import { WELL_KNOWN_FILE_OF } from '../runtime/well-known';
import {
  enumModel,
  extensionModels,
  messageModel,
  serviceModel,
  unescapeFullName,
} from '../internal/reflection-to-model';
import type { CodegenRequest, FileModel, TypeLocation } from './model';

/** Options of `loadProtoFiles`. */
export interface LoadProtoFilesOptions {
  /**
   * Directories imports are resolved against, in order, like protoc's `-I`; every input file
   * must be inside one, and its name in the output is its path relative to that directory.
   * @default [process.cwd()]
   */
  includeDirs: string[];
}

/**
 * Parses .proto files with protobufjs (no protoc) into the model `generate` reads: the files
 * given are generated, the files they import are indexed for type references. Imports resolve
 * like protoc's: against the include directories, and `google/protobuf/*.proto` from the copies
 * protobufjs bundles (the well-known types and descriptor.proto, so custom options load).
 *
 * @example
 * const request = loadProtoFiles(['protos/shop/orders.proto'], { includeDirs: ['protos'] });
 */
export function loadProtoFiles(
  paths: readonly string[],
  options: Partial<LoadProtoFilesOptions> = {},
): CodegenRequest {
  const includeDirs = (options.includeDirs ?? [process.cwd()]).map((d) => resolve(d));
  const nameOf = (absolute: string): string => {
    for (const dir of includeDirs) {
      const rel = relative(dir, absolute);
      if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
    }
    throw new ProtoParseError(
      `${absolute} is not inside any include directory (--proto_path): ${includeDirs.join(', ')}`,
    );
  };
  // Like protoc, an input that is not a file on disk may be named relative to an include
  // directory (`-I protos messages/ponger.proto`).
  const inputName = (p: string): string => {
    const onDisk = resolve(p);
    const below = isAbsolute(p) || existsSync(onDisk) ? undefined : locateBelow(p, includeDirs);
    // google/protobuf files come with protobufjs, as they come with protoc.
    if (below === undefined && !existsSync(onDisk) && common.get(p) !== null) return p;
    if (below === undefined && !existsSync(onDisk)) {
      throw new ProtoParseError(`${p}: no such file (nor below ${includeDirs.join(', ')})`);
    }
    const name = nameOf(below ?? onDisk);
    // Imports of `name` find the first include directory's file; this must be that file.
    const first = locateBelow(name, includeDirs);
    if (first !== undefined && first !== (below ?? onDisk)) {
      throw new ProtoParseError(
        `${p}: input is shadowed in the --proto_path by ${first} (it is ${name} there too); give that file as the input or put this file's include directory first, as protoc requires`,
      );
    }
    return name;
  };
  const names = paths.map(inputName);
  const root = new Root();
  const loaded = new Map<string, string>(); // name → package
  const syntaxes = new Map<string, string>();
  const sources = new Map<string, string>(); // name → source as written, for error locations
  const imports = new Map<string, string[]>(); // name → its imports, to check what it uses
  const loading: string[] = []; // the import chain being loaded, to refuse cycles as protoc does
  const fileOptions: DeclaredOptions[] = [];
  const optionsTaken = new Map<Namespace, number>(); // package → its file options seen so far
  const clashes: ExtensionNumberClash[] = []; // extension numbers reused across files
  const load = (name: string, importer: string | undefined): void => {
    if (importer !== undefined) checkImportPath(name, importer, sources.get(importer));
    if (loading.includes(name)) throw importCycle([...loading, name], sources);
    if (loaded.has(name)) return;
    const bundled = common.get(name);
    if (bundled !== null) {
      loaded.set(name, 'google.protobuf');
      root.addJSON(bundled.nested ?? {});
      return;
    }
    const path = locate(
      name,
      importer,
      includeDirs,
      importer === undefined ? undefined : sources.get(importer),
    );
    const written = escapeProtoSource(readSource(path, name), name);
    const source = captureRawOptionValues(
      normalizeAggregates(
        normalizeStringLiterals(normalizeHexPrefix(normalizeDottedNames(written))),
      ),
    );
    syntaxes.set(name, syntaxOf(source, name));
    // Errors are located in the text as written: the rewrites above keep every line but not
    // every column (an option's value becomes a longer stand-in).
    sources.set(name, written);
    let parsed: IParserResult;
    try {
      // The parser stamps this on every declaration: the include-relative name, as protoc has it.
      (parse as typeof parse & { filename: string | null }).filename = name;
      const parseOne = () => parse(source, root, { keepCase: true });
      parsed = parseWithSyntheticOneofs(
        () =>
          parseWithOneofGroups(() =>
            parseWithEnumValueOptions(() => parseWithExtensionNumbers(parseOne, clashes, sources)),
          ),
        name,
        written,
      );
    } catch (err) {
      if (err instanceof ProtoParseError) throw err;
      throw new ProtoParseError(parseErrorMessage(err as Error, name, written, root, sources), {
        cause: err,
      });
    }
    loaded.set(name, parsed.package ?? '');
    checkRangeStatements(name, source);
    checkEmptyExtends(name, source);
    fileOptions.push(fileOptionsOf(root, parsed.package, name, optionsTaken));
    fileOptions.push(...extensionRangeOptions(root, name, parsed.package ?? '', source));
    loading.push(name);
    imports.set(name, [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]);
    checkImportsListedOnce(imports.get(name) ?? [], name, source);
    for (const dep of imports.get(name) ?? []) load(dep, name);
    loading.pop();
  };
  for (const name of names) load(name, undefined);
  resolveAll(root, names, sources);
  checkDeclarations(root, syntaxes, sources);
  checkImports(root, imports, sources, syntaxes);
  checkRelativeNames(root, sources);
  const visible = new Map<string, ReadonlySet<string>>();
  checkOptions(
    [...fileOptions, ...declaredOptionsBelow(root)].filter(
      (d) => sources.has(d.file) && syntaxes.get(d.file) !== 'editions',
    ),
    optionsDescriptor(root),
    (file) =>
      visible.get(file) ?? visible.set(file, visibleFiles(file, imports, sources)).get(file)!,
    sources,
  );

  const decls = new Map<string, ReflectionObject[]>();
  const types = new Map<string, TypeLocation>();
  collect(root, '', decls, types);
  return {
    types,
    warnings: extensionNumberWarnings(clashes, buildOrder(names, imports), sources),
    files: names.map((name) => {
      // Where an editions file says so, for its error.
      const editions = locationOf(name, sources.get(name), /^\s*edition\s*=/m);
      const syntax = syntaxes.get(name) ?? 'proto2';
      if (syntax !== 'editions') refuseMessageSets(decls.get(name) ?? [], name, sources.get(name));
      return fileModel(editions, name, loaded.get(name) ?? '', syntax, decls.get(name) ?? []);
    }),
  };
}

/** `a.proto:3: import "b.proto" makes a cycle: a.proto -> b.proto -> a.proto`, as protoc refuses it. */
function importCycle(chain: readonly string[], sources: ReadonlyMap<string, string>): Error {
  const importer = chain[chain.length - 2];
  const name = chain[chain.length - 1];
  const where = importLocation(importer, sources.get(importer), name);
  const cycle = chain.slice(chain.indexOf(name)).join(' -> ');
  return new ProtoParseError(`${where}: import "${name}" makes an import cycle: ${cycle}`);
}

/**
 * Resolves every type reference; one that does not resolve is a ProtoParseError naming the file
 * and line of the field or rpc that uses it (protobufjs's own error names neither).
 */
function resolveAll(root: Root, names: readonly string[], sources: ReadonlyMap<string, string>) {
  try {
    root.resolveAll();
  } catch (err) {
    const found = firstUnresolved(root);
    if (found === undefined) {
      throw new ProtoParseError(`cannot resolve ${names.join(', ')}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const { obj, error } = found;
    const where = declarationLocation(obj, sources, names.join(', '));
    const what = obj instanceof Method ? 'rpc' : 'field';
    const fullName = unescapeFullName(obj.fullName, unescapeIdentifier);
    throw new ProtoParseError(`${where}: ${what} ${fullName}: ${error.message}`, { cause: err });
  }
}

/**
 * Groups top-level declarations (types, services, file-scope extensions) by file and indexes
 * every message and enum.
 */
function collect(
  ns: Namespace,
  pkg: string,
  decls: Map<string, ReflectionObject[]>,
  types: Map<string, TypeLocation>,
): void {
  for (const obj of ns.nestedArray) {
    const isExtension = obj instanceof Field && obj.extend !== undefined;
    if (obj instanceof Type || obj instanceof Enum || obj instanceof Service || isExtension) {
      const file = obj.filename ?? null;
      if (file !== null) {
        const list = decls.get(file);
        if (list === undefined) decls.set(file, [obj]);
        else list.push(obj); // not a copy per declaration: quadratic in a file's messages
      }
      if (obj instanceof Type || obj instanceof Enum) index(obj, pkg, file, types);
    } else if (obj instanceof Namespace) {
      collect(obj, unescapeFullName(obj.fullName, unescapeIdentifier), decls, types);
    }
  }
}

function index(
  obj: Type | Enum,
  pkg: string,
  file: string | null,
  types: Map<string, TypeLocation>,
) {
  const fullName = unescapeFullName(obj.fullName, unescapeIdentifier);
  const wellKnown = pkg === 'google.protobuf' ? WELL_KNOWN_FILE_OF[obj.name] : undefined;
  const fileName = file ?? (wellKnown !== undefined ? `google/protobuf/${wellKnown}.proto` : '');
  types.set(fullName, {
    fullName,
    kind: obj instanceof Type ? 'message' : 'enum',
    file: fileName,
    package: pkg,
  });
  if (obj instanceof Type) {
    for (const nested of obj.nestedArray) {
      if (nested instanceof Type || nested instanceof Enum) index(nested, pkg, file, types);
    }
  }
}

function fileModel(
  where: string,
  name: string,
  pkg: string,
  syntax: string,
  objects: ReflectionObject[],
): FileModel {
  if (syntax !== 'proto2' && syntax !== 'proto3') {
    throw new UnsupportedProtoError(
      `${where}: ${name} uses editions; granary-codegen supports proto2 and proto3 files`,
    );
  }
  const u = unescapeIdentifier;
  const scope = pkg === '' ? '' : `.${pkg}`;
  return {
    name,
    package: unescapeFullName(pkg, u),
    syntax,
    messages: objects
      .filter((o): o is Type => o instanceof Type)
      .map((t) => messageModel(t, name, u)),
    enums: objects.filter((o): o is Enum => o instanceof Enum).map((e) => enumModel(e, u)),
    services: objects
      .filter((o): o is Service => o instanceof Service)
      .map((s) => serviceModel(s, u)),
    extensions: extensionModels(objects, scope, name, u),
  };
}

/** The `syntax` statement (comments stripped): proto2 (protoc's default), proto3 or editions. */
/**
 * The syntax `file` declares; a syntax protoc does not know (`"proto4"`) is refused at its line
 * (protobufjs would read it as an edition and fail later, naming no line).
 */
function syntaxOf(source: string, file: string): string {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  if (/^\s*edition\s*=/m.test(code)) return 'editions';
  // Adjacent literals join, as everywhere in a .proto: `syntax = "proto" "3";`.
  const match = /^\s*syntax\s*=\s*((?:"[^"\n]*"\s*|'[^'\n]*'\s*)+)/m.exec(code);
  if (match === null) return 'proto2';
  const syntax = [...match[1].matchAll(/"([^"]*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2]).join('');
  if (syntax !== 'proto2' && syntax !== 'proto3') {
    const where = locationOf(file, source, /(?<=^\s*syntax\s*=\s*)["']/m);
    throw new ProtoParseError(
      `${where}: unrecognized syntax identifier "${syntax}" (protoc knows "proto2" and "proto3")`,
    );
  }
  return syntax;
}
