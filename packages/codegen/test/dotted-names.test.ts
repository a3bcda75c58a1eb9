import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizeDottedNames } from '../src/internal/dotted-names';
import { requireProtoc } from './helpers/paths';
import { bothGenerate, codegenOn, protocOn, writeProtos } from './helpers/oracle';
import { linesOnly } from './helpers/locations';

/*
 * protoc reads `.` as a token of its own, so whitespace, comments and line breaks may stand
 * around the dots of any dotted name. Each input is given to protoc first; granary-codegen must
 * then write what protoc-gen-granary writes.
 */

const OPTIONS =
  'syntax = "proto2";\npackage a . /* part */ b;\nimport "google/protobuf/descriptor.proto";\n' +
  'message D {\n  optional string c = 1;\n  extensions 100 to 200;\n}\n' +
  'extend google . protobuf . FieldOptions {\n  optional D d = 50001;\n  optional string s = 50002;\n}\n' +
  'extend . google.protobuf.MessageOptions {\n  optional int32 m = 50003;\n}\n' +
  'extend a . b . D {\n  optional string x = 100;\n}\n';

const ACCEPTED: [what: string, source: string][] = [
  ['a package name', 'syntax = "proto3";\npackage a /* x */ . // y\n  b;\nmessage M {}\n'],
  [
    'proto3 field types, map values, a leading dot',
    'syntax = "proto3";\npackage a.b;\nmessage D {}\nmessage M {\n  a . b . D f = 1;\n' +
      '  . a . b.D g = 2;\n  optional .a.b .D h = 3;\n  repeated a .\n    b. D i = 4;\n' +
      '  map<string, a . b . D> j = 5;\n  optional.a.b.D k = 6;\n}\n',
  ],
  [
    'rpc types, streamed or not',
    'syntax = "proto3";\npackage a.b;\nmessage D {}\nservice S {\n' +
      '  rpc R(a . b . D) returns (. a.b.D);\n  rpc T(stream.a.b.D) returns (D);\n}\n',
  ],
  [
    'extendees and option names, in brackets and statements',
    `${OPTIONS}message M {\n  option (a . b . m) = 1;\n  optional string f = 1 [(a . b . s) = "x"];\n` +
      '  optional string g = 2 [( . a.b.d ) . c = "y"];\n' +
      '  optional string h = 3 [(a.b.d) = { c: "q" [a . b . x]: "z" }];\n}\n',
  ],
  [
    'proto2 labels glued to a leading dot, beside float defaults',
    'syntax = "proto2";\npackage optional.b;\nmessage D { extensions 1 to 9; }\nmessage M {\n' +
      '  optional.optional.b.D d = 1;\n  repeated optional . b.D e = 2;\n' +
      '  optional float f = 3 [default = .5e3];\n  optional double g = 4 [default = 1.e5];\n}\n' +
      'extend.optional.b.D {\n  optional int32 x = 1;\n}\n',
  ],
  [
    'minus signs apart from their numbers',
    'syntax = "proto2";\npackage p;\nenum E {\n  A = - 1;\n  B = 0;\n  reserved - 5 to - 3;\n}\n' +
      'message M {\n  optional int32 d = 1 [default = - 5];\n' +
      '  optional double f = 2 [default = - /* x */ 1.5];\n  optional float g = 3 [default = -\n inf];\n}\n',
  ],
];

describe('dotted names with whitespace or comments around their dots', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-dotted-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [what, source] of ACCEPTED) {
    it(`${what}: protoc accepts them, granary-codegen generates the same module`, () => {
      writeProtos(dir, { 'x.proto': source });
      const { generated, cli } = bothGenerate(dir, 'x.proto');
      expect(cli).to.equal(generated);
    });
  }

  it('keeps every line where it was, so later errors name the line protoc names', () => {
    const source =
      'syntax = "proto3";\npackage a\n  .\n  b;\nmessage M {\n  a .\n b . Q e = 1;\n}\n';
    expect(normalizeDottedNames(source).split('\n')).to.have.lengthOf(source.split('\n').length);
    writeProtos(dir, { 'x.proto': source });
    const protoc = protocOn(dir, ['x.proto']);
    expect(protoc.stderr).to.contain('x.proto:6:').and.contain('"a.b.Q" is not defined');
    const { code, err } = codegenOn(dir, ['x.proto']);
    expect(code).to.equal(1);
    expect(linesOnly(err)).to.match(/ERR_PROTO_PARSE: x\.proto:[67]: field a\.b\.M\.e: no such/);
  });

  it('refuses what protoc refuses: a dot with no name after it, two dots', () => {
    for (const body of ['package a . . b;', 'package a . ;', 'message M { . . D d = 1; }']) {
      writeProtos(dir, { 'x.proto': `syntax = "proto3";\n${body}\nmessage D {}\n` });
      expect(protocOn(dir, ['x.proto']).status, body).to.equal(1);
      const { code, err } = codegenOn(dir, ['x.proto']);
      expect(code, body).to.equal(1);
      expect(linesOnly(err), body).to.contain('ERR_PROTO_PARSE: x.proto:2: ');
    }
  });
});
