import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { PACKAGE_DIR } from './paths';

/** `strict` plus the stricter flags people turn on, common to every resolution below. */
const STRICT: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  types: [],
  skipLibCheck: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
};

/**
 * How a user's project may resolve and emit the generated modules: NodeNext over CommonJS (this
 * repository's setting, `isolatedModules`), ESM for a bundler with `verbatimModuleSyntax` (every
 * import kept exactly as written, types imported with `import type`), and `node10`, which
 * ignores `exports` and finds `@granary/codegen/runtime` through `typesVersions`.
 */
export const RESOLUTIONS = {
  nodenext: {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    isolatedModules: true,
  },
  bundler: {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    verbatimModuleSyntax: true,
  },
  node10: {
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    isolatedModules: true,
  },
} satisfies Record<string, ts.CompilerOptions>;

/**
 * Type-checks `files` as a user's project would, against the real @granary packages found
 * through node_modules; returns the formatted diagnostics ('' when clean).
 */
export function typeCheck(
  files: string[],
  resolution: keyof typeof RESOLUTIONS = 'nodenext',
): string {
  const program = ts.createProgram(files, { ...STRICT, ...RESOLUTIONS[resolution] });
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => PACKAGE_DIR,
    getNewLine: () => '\n',
  });
}

/**
 * A fresh directory inside this package (so node_modules resolves the @granary packages as it
 * does for a project depending on them) for generated modules a test type-checks.
 */
export function scratchDir(): string {
  const parent = join(PACKAGE_DIR, 'dist', 'scratch');
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, 'gen-'));
}
