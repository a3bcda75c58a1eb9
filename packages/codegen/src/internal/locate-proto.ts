import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ProtoParseError } from '../errors';
import { importLocation } from './source-location';

/*
 * Finding and reading .proto files for granary-codegen as protoc does: below the include
 * directories (`-I`) in order, then google/protobuf files from the copies protobufjs bundles.
 */

/** The text of `path` (file `name`); a ProtoParseError naming it when it cannot be read. */
export function readSource(path: string, name: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ProtoParseError(`cannot read ${name}: ${(err as Error).message}`, { cause: err });
  }
}

/** `name` in the first include directory that has it. */
export function locateBelow(name: string, includeDirs: readonly string[]): string | undefined {
  return includeDirs.map((dir) => resolve(dir, name)).find((path) => existsSync(path));
}

/**
 * The file behind import `name` (of `importer`, whose source gives the line in the error when
 * there is none): an include directory's, or the copy protobufjs bundles.
 */
export function locate(
  name: string,
  importer: string | undefined,
  includeDirs: string[],
  importerSource?: string,
): string {
  const found = locateBelow(name, includeDirs);
  if (found !== undefined) return found;
  const bundled = name.startsWith('google/protobuf/') ? bundledProto(name) : undefined;
  if (bundled !== undefined) return bundled;
  throw new ProtoParseError(
    importer === undefined
      ? `${name} not found in ${includeDirs.join(', ')}`
      : `${importLocation(importer, importerSource, name)}: import "${name}" not found in ${includeDirs.join(', ')}`,
  );
}

/** protobufjs's copy of a google/protobuf file (descriptor.proto, api.proto...), if it has one. */
function bundledProto(name: string): string | undefined {
  try {
    return require.resolve(`protobufjs/${name}`);
  } catch {
    return undefined;
  }
}
