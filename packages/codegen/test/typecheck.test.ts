import { expect } from 'chai';
import { join } from 'node:path';
import * as ts from 'typescript';
import { GOLDEN_DIR, PACKAGE_DIR, listFiles } from './helpers/paths';

/**
 * The golden modules compiled exactly as a user's project would: resolved through
 * node_modules against the real @granary/core, @granary/cluster and @granary/codegen/runtime,
 * under `strict` plus the stricter flags people turn on.
 */
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
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
  isolatedModules: true,
};

describe('generated code', () => {
  it('type-checks under tsc --strict (and stricter flags) against the real packages', function () {
    this.timeout(60_000);
    const files = listFiles(GOLDEN_DIR).map((f) => join(GOLDEN_DIR, f));
    const program = ts.createProgram(files, { ...OPTIONS, baseUrl: PACKAGE_DIR });
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const text = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => PACKAGE_DIR,
      getNewLine: () => '\n',
    });
    expect(text).to.equal('');
    expect(files).to.have.length.greaterThan(5);
  });
});
