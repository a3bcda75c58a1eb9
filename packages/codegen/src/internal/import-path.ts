import { ProtoParseError } from '../errors';
import { importLocation, locationOf, quote } from './source-location';

/*
 * An import names a file by its path below an include directory, and that path is also the
 * file's identity (two spellings of one path would load it twice) and where its generated
 * module goes (`../x.proto` would be imported from outside the output directory). protoc
 * accepts only plain paths there; so does granary-codegen.
 */

/**
 * Throws a ProtoParseError at the import of `name` in `importer` when `name` is not a plain
 * relative path: backslashes, `//`, a leading `/`, or a `.` or `..` segment.
 */
export function checkImportPath(name: string, importer: string, importerSource?: string): void {
  const segments = name.split('/');
  const plain = !name.includes('\\') && segments.every((s) => s !== '' && s !== '.' && s !== '..');
  if (plain) return;
  const where = importLocation(importer, importerSource, name);
  throw new ProtoParseError(
    `${where}: import "${name}": backslashes, consecutive slashes, "." or ".." are not allowed in an import path (name the file from its include directory, as protoc requires)`,
  );
}

/**
 * Throws a ProtoParseError at the second `import` of a file `importer` lists twice (`imports`:
 * its imports as parsed, weak ones included), as protoc refuses it.
 */
export function checkImportsListedOnce(
  imports: readonly string[],
  importer: string,
  importerSource: string,
): void {
  const seen = new Set<string>();
  for (const name of imports) {
    if (seen.has(name)) {
      const pattern = new RegExp(`\\bimport\\s+(?:public\\s+|weak\\s+)?["']${quote(name)}["']`);
      const where = locationOf(importer, importerSource, pattern, 1);
      throw new ProtoParseError(`${where}: import "${name}" was listed twice`);
    }
    seen.add(name);
  }
}
