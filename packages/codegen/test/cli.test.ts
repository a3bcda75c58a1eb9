import { expect } from 'chai';
import { InvalidArgumentError, InvalidOptionError } from '@granary/core';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCliArguments, runCli } from '../src/cli/cli';
import { GOLDEN_DIR, PROTOS_DIR } from './helpers/paths';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) } };
}

describe('granary-codegen', () => {
  describe('parseCliArguments', () => {
    it('reads files, --out, repeated -I and --import-extension in both flag forms', () => {
      expect(
        parseCliArguments([
          'a.proto',
          '-I',
          'x',
          '-Iy',
          '--proto_path=z',
          '--out=gen',
          'b.proto',
          '--import-extension',
          '.js',
        ]),
      ).to.deep.equal({
        files: ['a.proto', 'b.proto'],
        outDir: 'gen',
        includeDirs: ['x', 'y', 'z'],
        importExtension: '.js',
      });
    });

    it('defaults the include directory to the current one', () => {
      expect(parseCliArguments(['a.proto', '-o', 'gen']).includeDirs).to.deep.equal(['.']);
    });

    it('requires --out', () => {
      expect(() => parseCliArguments(['a.proto'])).to.throw(InvalidOptionError, /--out/);
    });

    it('requires at least one file', () => {
      expect(() => parseCliArguments(['--out', 'gen'])).to.throw(
        InvalidArgumentError,
        /no .proto files/,
      );
    });

    it('rejects unknown options, naming them', () => {
      expect(() => parseCliArguments(['a.proto', '--out', 'g', '--fast'])).to.throw(
        InvalidOptionError,
        /--fast/,
      );
    });

    it('rejects an --import-extension whose imports would not resolve to .granary.ts files', () => {
      // TypeScript looks for x.granary.mts behind './x.granary.mjs': never written.
      for (const ext of ['.mjs', '.cjs', 'js']) {
        expect(() =>
          parseCliArguments(['a.proto', '--out', 'g', '--import-extension', ext]),
        ).to.throw(InvalidOptionError, /must be '', \.js or \.ts/);
      }
    });

    it('rejects a flag without its value', () => {
      expect(() => parseCliArguments(['a.proto', '--out'])).to.throw(
        InvalidOptionError,
        /--out: needs a value/,
      );
    });
  });

  describe('runCli', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'granary-cli-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('writes <name>.granary.ts under --out, keeping the include-relative path', () => {
      const { out, io } = capture();
      const code = runCli(
        [join(PROTOS_DIR, 'messages', 'protos.proto'), '-I', PROTOS_DIR, '--out', dir],
        io,
      );
      expect(code).to.equal(0);
      const written = join(dir, 'messages', 'protos.granary.ts');
      expect(out.join('')).to.contain(written);
      expect(readFileSync(written, 'utf8')).to.equal(
        readFileSync(join(GOLDEN_DIR, 'messages', 'protos.granary.ts'), 'utf8'),
      );
    });

    it('takes an input named relative to an include directory, as protoc does', () => {
      // `protoc -I protos messages/protos.proto`: the name is not a path from the current
      // directory, but the file is found below the include directory.
      const { io } = capture();
      const code = runCli(['messages/protos.proto', '-I', PROTOS_DIR, '--out', dir], io);
      expect(code).to.equal(0);
      expect(readFileSync(join(dir, 'messages', 'protos.granary.ts'), 'utf8')).to.equal(
        readFileSync(join(GOLDEN_DIR, 'messages', 'protos.granary.ts'), 'utf8'),
      );
    });

    it('prints usage and exits 1 on bad arguments, without a stack trace', () => {
      const { err, io } = capture();
      expect(runCli(['--out', dir], io)).to.equal(1);
      expect(err.join('')).to.contain('ERR_INVALID_ARGUMENT').and.contain('usage: granary-codegen');
      expect(err.join('')).to.not.match(/\n\s+at /);
    });

    it('--help prints usage and exits 0', () => {
      const { out, io } = capture();
      expect(runCli(['--help'], io)).to.equal(0);
      expect(out.join('')).to.contain('usage: granary-codegen');
    });
  });
});
