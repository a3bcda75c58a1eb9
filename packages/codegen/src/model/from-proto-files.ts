import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { Enum, Namespace, Root, Service, Type, parse } from 'protobufjs';
import type { ReflectionObject } from 'protobufjs';
import { ProtoParseError, UnsupportedProtoError } from '../errors';
import { enumModel, messageModel, serviceModel, strip } from '../internal/reflection-to-model';
import { WELL_KNOWN_FILES } from '../runtime/well-known';
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

/** The well-known file each google.protobuf type protobufjs bundles comes from. */
const WELL_KNOWN_FILE_OF: Record<string, string> = {
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

/**
 * Parses .proto files with protobufjs (no protoc) into the model `generate` reads: the files
 * given are generated, the files they import are indexed for type references.
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
  const inputs = paths.map((p) => resolve(p));
  const names = inputs.map(nameOf);

  const root = new Root();
  root.resolvePath = (origin, target) => {
    if (origin === '') return target;
    if (target.startsWith('google/protobuf/')) {
      // Bundled well-known files never reach here (protobufjs resolves them itself).
      throw new UnsupportedProtoError(
        `${nameOf(origin)} imports ${target}; the supported google/protobuf files are ` +
          WELL_KNOWN_FILES.join(', '),
      );
    }
    for (const dir of includeDirs) {
      if (existsSync(resolve(dir, target))) return resolve(dir, target);
    }
    throw new ProtoParseError(
      `import "${target}" of ${nameOf(origin)} not found in ${includeDirs.join(', ')}`,
    );
  };
  try {
    root.loadSync(inputs, { keepCase: true });
    root.resolveAll();
  } catch (err) {
    if (err instanceof ProtoParseError || err instanceof UnsupportedProtoError) throw err;
    throw new ProtoParseError(`cannot parse ${names.join(', ')}: ${(err as Error).message}`, {
      cause: err,
    });
  }

  const decls = new Map<string, ReflectionObject[]>();
  const types = new Map<string, TypeLocation>();
  collect(root, '', decls, types, nameOf);
  return {
    types,
    files: inputs.map((absolute, i) => fileModel(absolute, names[i], decls.get(absolute) ?? [])),
  };
}

/** Groups top-level declarations by file and indexes every message and enum. */
function collect(
  ns: Namespace,
  pkg: string,
  decls: Map<string, ReflectionObject[]>,
  types: Map<string, TypeLocation>,
  nameOf: (absolute: string) => string,
): void {
  for (const obj of ns.nestedArray) {
    if (obj instanceof Type || obj instanceof Enum || obj instanceof Service) {
      const file = obj.filename ?? null;
      if (file !== null) decls.set(file, [...(decls.get(file) ?? []), obj]);
      if (!(obj instanceof Service)) index(obj, pkg, file === null ? null : nameOf(file), types);
    } else if (obj instanceof Namespace) {
      collect(obj, strip(obj.fullName), decls, types, nameOf);
    }
  }
}

function index(
  obj: Type | Enum,
  pkg: string,
  file: string | null,
  types: Map<string, TypeLocation>,
) {
  const fullName = strip(obj.fullName);
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

function fileModel(absolute: string, name: string, objects: ReflectionObject[]): FileModel {
  const source = readFileSync(absolute, 'utf8');
  const parsed = parse(source, { keepCase: true });
  const syntax = syntaxOf(source, name);
  return {
    name,
    package: parsed.package ?? '',
    syntax,
    messages: objects.filter((o): o is Type => o instanceof Type).map((t) => messageModel(t, name)),
    enums: objects.filter((o): o is Enum => o instanceof Enum).map(enumModel),
    services: objects.filter((o): o is Service => o instanceof Service).map(serviceModel),
  };
}

/** The `syntax` statement (comments stripped); protoc's default is proto2. */
function syntaxOf(source: string, name: string): 'proto2' | 'proto3' {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  if (/^\s*edition\s*=/m.test(code)) {
    throw new UnsupportedProtoError(
      `${name} uses editions; granary-codegen supports proto2 and proto3 files`,
    );
  }
  const match = /^\s*syntax\s*=\s*["'](proto[23])["']/m.exec(code);
  return match === null ? 'proto2' : (match[1] as 'proto2' | 'proto3');
}
