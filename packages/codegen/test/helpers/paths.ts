import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** packages/codegen (this file runs from dist/test/helpers). */
export const PACKAGE_DIR = join(__dirname, '..', '..', '..');
/** Input .proto files, each written for these tests. */
export const PROTOS_DIR = join(PACKAGE_DIR, 'test', 'protos');
/** Checked-in expected output, rewritten by `npm run golden -w @granary/codegen`. */
export const GOLDEN_DIR = join(PACKAGE_DIR, 'test', 'golden');
export const PLUGIN_BIN = join(PACKAGE_DIR, 'bin', 'protoc-gen-granary.cjs');
export const CLI_BIN = join(PACKAGE_DIR, 'bin', 'granary-codegen.cjs');
export const PROTOC = '/usr/bin/protoc';

/** Fails fast with the Debian package to install when protoc is missing (.ci/run installs it). */
export function requireProtoc(): void {
  if (!existsSync(PROTOC)) {
    throw new Error(`${PROTOC} not found: install the Debian package protobuf-compiler`);
  }
}

/** The golden set: every .proto under test/protos, as names relative to it. */
export function goldenInputs(): string[] {
  return readdirSync(PROTOS_DIR, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.proto'))
    .sort();
}

/** Every file under `dir`, relative to it, `/`-separated, sorted. */
export function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) =>
      join(d.parentPath, d.name)
        .slice(dir.length + 1)
        .split('\\')
        .join('/'),
    )
    .sort();
}
