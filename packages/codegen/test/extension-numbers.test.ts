import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireProtoc } from './helpers/paths';
import { bothGenerate, codegenOn, protocOn, writeProtos } from './helpers/oracle';
import { linesOnly } from './helpers/locations';

/*
 * Two extensions of one message with one number: protoc 3.21 refuses them in one file and only
 * warns when they are in two. granary-codegen must do the same, with protoc's words and line,
 * and still generate both files as protoc-gen-granary does.
 */

const M = 'syntax = "proto2";\npackage p;\nmessage M {\n  extensions 100 to 199;\n}\n';
const A =
  'syntax = "proto2";\npackage p;\nimport "m.proto";\nextend M {\n  optional int32 a = 100;\n}\n';
const B =
  'syntax = "proto2";\npackage p;\nimport "m.proto";\nextend M {\n  optional string b = 100;\n}\n';

/**
 * protoc's warnings about extension numbers (`file:line: text`, its column and final `.` left
 * out) on `inputs`; it also warns that b.proto's import of a.proto is unused.
 */
function protocWarnings(dir: string, inputs: readonly string[]): string[] {
  const run = protocOn(dir, inputs);
  expect(run.status, run.stderr).to.equal(0);
  return [
    ...run.stderr.matchAll(/^(\S+\.proto:\d+):\d+: warning: (Extension number.*?)\.?$/gm),
  ].map(([, where, text]) => `${where}: ${text.toLowerCase()}`);
}

/** granary-codegen's warnings, in the same shape (its extension's name left out). */
function codegenWarnings(dir: string, inputs: readonly string[]): string[] {
  const { code, err } = codegenOn(dir, inputs);
  expect(code, err).to.equal(0);
  return [
    ...linesOnly(err).matchAll(
      /^granary: warning: (\S+\.proto:\d+): extension \S+: (.*?) \(protoc only warns.*$/gm,
    ),
  ].map(([, where, text]) => `${where}: ${text.toLowerCase()}`);
}

describe('an extension number used twice for one message', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-extnum-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('in a file and one it imports: protoc warns at the importer, granary-codegen too', () => {
    writeProtos(dir, {
      'm.proto': M,
      'a.proto': A,
      'b.proto': B.replace('import', 'import "a.proto";\nimport'),
    });
    for (const inputs of [['b.proto', 'a.proto'], ['a.proto', 'b.proto'], ['b.proto']]) {
      const expected = protocWarnings(dir, inputs);
      expect(expected, inputs.join(' ')).to.have.lengthOf(1);
      expect(codegenWarnings(dir, inputs), inputs.join(' ')).to.deep.equal(expected);
    }
    for (const input of ['a.proto', 'b.proto']) {
      const { generated, cli } = bothGenerate(dir, input);
      expect(cli, input).to.equal(generated);
    }
  });

  it('in two files that import only the extendee: protoc warns at the later input, granary-codegen too', () => {
    writeProtos(dir, { 'm.proto': M, 'a.proto': A, 'b.proto': B });
    for (const inputs of [
      ['a.proto', 'b.proto'],
      ['b.proto', 'a.proto'],
    ]) {
      const expected = protocWarnings(dir, inputs);
      expect(expected, inputs.join(' ')).to.have.lengthOf(1);
      expect(codegenWarnings(dir, inputs), inputs.join(' ')).to.deep.equal(expected);
    }
  });

  it('in one file: protoc refuses it, granary-codegen too at the second extension', () => {
    const source = `${M}extend M {\n  optional int32 a = 100;\n}\nextend M {\n  optional int32 b = 100;\n}\n`;
    writeProtos(dir, { 'x.proto': source });
    const refused = protocOn(dir, ['x.proto']);
    expect(refused.status).to.equal(1);
    const [, line, text] = /^x\.proto:(\d+):\d+: (.*?)\.?$/m.exec(refused.stderr) ?? [];
    const { code, err } = codegenOn(dir, ['x.proto']);
    expect(code).to.equal(1);
    expect(linesOnly(err).toLowerCase()).to.contain(
      `err_proto_parse: x.proto:${line}: extension p.b: ${text.toLowerCase()}`,
    );
  });
});
