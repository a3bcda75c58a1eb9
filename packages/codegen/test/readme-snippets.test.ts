import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import * as ts from 'typescript';
import { GOLDEN_DIR, PACKAGE_DIR } from './helpers/paths';
import { scratchDir } from './helpers/type-check';

/**
 * Every ```ts compile block of a README, each after its context: the body of an HTML comment
 * `<!-- compile-context ... -->` right before the block (invisible on the rendered page), for
 * what a fragment takes from the text around it (a `cluster` started above, a logger).
 */
function snippets(readme: string): string[] {
  const text = readFileSync(readme, 'utf8');
  return [
    ...text.matchAll(/(?:<!-- compile-context\n([\s\S]*?)-->\n\s*)?```ts compile\n([\s\S]*?)```/g),
  ].map((m) => `${m[1] ?? ''}${m[2]!}`);
}

/** The TypeScript blocks of a README that no test compiles (```ts without `compile`). */
function uncompiled(readme: string): string[] {
  const text = readFileSync(readme, 'utf8');
  return [...text.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].map(
    (m) => m[1]!.split('\n', 1)[0]!,
  );
}

/**
 * Type-checks each snippet as an ES module of a user's strict project (NodeNext, top-level
 * await), next to the generated module of test/protos/messages/protos.proto.
 */
function check(code: string[]): string {
  const dir = scratchDir();
  mkdirSync(join(dir, 'gen', 'messages'), { recursive: true });
  copyFileSync(
    join(GOLDEN_DIR, 'messages', 'protos.granary.ts'),
    join(dir, 'gen', 'messages', 'protos.granary.ts'),
  );
  const files = code.map((c, i) => {
    const file = join(dir, `snippet-${i}.mts`);
    writeFileSync(file, c);
    return file;
  });
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    skipLibCheck: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    noUncheckedIndexedAccess: true,
  });
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => dir,
    getNewLine: () => '\n',
  });
}

describe('README snippets compile', function () {
  this.timeout(60_000);
  for (const [name, readme] of [
    ['codegen', join(PACKAGE_DIR, 'README.md')],
    ['cluster', join(PACKAGE_DIR, '..', 'cluster', 'README.md')],
    ['ping-pong example', join(PACKAGE_DIR, '..', '..', 'examples', 'ping-pong', 'README.md')],
    ['core', join(PACKAGE_DIR, '..', 'core', 'README.md')],
    ['pool', join(PACKAGE_DIR, '..', 'pool', 'README.md')],
    ['testkit', join(PACKAGE_DIR, '..', 'testkit', 'README.md')],
    ['admin', join(PACKAGE_DIR, '..', 'admin', 'README.md')],
    ['docs/durability.md', join(PACKAGE_DIR, '..', '..', 'docs', 'durability.md')],
  ] as const) {
    it(`every TypeScript snippet of the ${name} README type-checks`, () => {
      const code = snippets(readme);
      if (name !== 'ping-pong example') expect(code).to.have.length.greaterThan(0);
      expect(
        uncompiled(readme),
        'blocks marked ```ts instead of ```ts compile (first lines)',
      ).to.deep.equal([]);
      expect(check(code)).to.equal('');
    });
  }
});
