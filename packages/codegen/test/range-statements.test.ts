import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireProtoc } from './helpers/paths';
import { bothGenerate, codegenOn, protocOn, writeProtos } from './helpers/oracle';
import { linesOnly } from './helpers/locations';

/*
 * `reserved` and `extensions` statements protoc refuses and protobufjs's parser reads. Each is
 * refused by protoc first; granary-codegen must refuse it at the statement's line (protoc names
 * no line for some of them).
 */

const REFUSED: [what: string, body: string, line: number, message: string][] = [
  ['a reserved number 0', 'message M {\n  reserved 0;\n}', 4, 'reserved numbers must be positive'],
  [
    'an extension number 0',
    'message M {\n  extensions 0 to 5;\n}',
    4,
    'extension numbers must be positive',
  ],
  [
    'an extension number past 2^29-1',
    'message M {\n  extensions 5 to 536870912;\n}',
    4,
    'extension numbers cannot be greater than 536870911',
  ],
  [
    'an extension range ending before it starts',
    'message M {\n  extensions 10 to 5;\n}',
    4,
    'extension range end number must be greater than start number',
  ],
  [
    'an enum reserved range ending before it starts',
    'enum E {\n  Z = 0;\n  reserved 5 to 1;\n}',
    5,
    'reserved range end number must be greater than start number',
  ],
  [
    'an enum reserved number of 2^31',
    'enum E {\n  Z = 0;\n  reserved 2147483648;\n}',
    5,
    'out of int32 range',
  ],
  [
    'an enum reserved number below -2^31',
    'enum E {\n  Z = 0;\n  reserved -2147483649 to -5;\n}',
    5,
    'out of int32 range',
  ],
  ['a number, then a name', 'message M {\n  reserved 1, "a";\n}', 4, 'names or numbers, not both'],
  ['a name, then a number', 'message M {\n  reserved "a", 1;\n}', 4, 'names or numbers, not both'],
  [
    'an enum name, then a number',
    'enum E {\n  Z = 0;\n  reserved "A", 3;\n}',
    5,
    'names or numbers, not both',
  ],
  ['reserved max', 'message M {\n  reserved max;\n}', 4, '"max" can only end a range'],
  ['extensions max', 'message M {\n  extensions max;\n}', 4, '"max" can only end a range'],
  [
    'options on reserved',
    'message M {\n  reserved 5 [deprecated = true];\n}',
    4,
    'takes no options',
  ],
  [
    'options on an enum reserved',
    'enum E {\n  Z = 0;\n  reserved "A" [deprecated = true];\n}',
    5,
    'takes no options',
  ],
  [
    'an empty extend block',
    'message D {\n  extensions 1 to 5;\n}\nextend D {\n}',
    7,
    'an extend block needs at least one field',
  ],
  [
    'an empty extend block in a message',
    'message D {\n  extensions 1 to 5;\n  extend D {}\n}',
    5,
    'an extend block needs at least one field',
  ],
  [
    'an enum reserved max',
    'enum E {\n  Z = 0;\n  reserved max;\n}',
    5,
    '"max" can only end a range',
  ],
];

describe('reserved and extensions statements', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-ranges-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [what, body, line, message] of REFUSED) {
    it(`${what}: protoc refuses it, granary-codegen too at x.proto:${line}`, () => {
      writeProtos(dir, { 'x.proto': `syntax = "proto2";\npackage p;\n${body}\n` });
      const refused = protocOn(dir, ['x.proto']);
      expect(refused.status, 'protoc accepted it').to.equal(1);
      // protoc names the line where it has one.
      expect(refused.stderr).to.match(new RegExp(`^x\\.proto(?::${line}:\\d+)?: `));
      const { code, err } = codegenOn(dir, ['x.proto']);
      expect(code).to.equal(1);
      expect(linesOnly(err)).to.contain(`ERR_PROTO_PARSE: x.proto:${line}: `).and.contain(message);
    });
  }

  it('what protoc accepts beside them generates: lists, hex and octal, max ends, groups', () => {
    const body =
      'message M {\n  reserved 1, 2 to 5, 10 to 99;\n  reserved "a", \'b\' "c";\n' +
      '  reserved 0x64 to max;\n  extensions 6 to 9;\n  message N {\n    extensions 1 to max;\n  }\n' +
      '}\nmessage R {\n  reserved 5 to 1;\n  optional group G = 1 {\n    reserved 0x20000000;\n  }\n}\n' +
      'enum E {\n  Z = 0;\n  reserved -5 to -1, 0x100, 0777, 1000 to max;\n  reserved "X";\n}\n';
    writeProtos(dir, { 'x.proto': `syntax = "proto2";\npackage p;\n${body}` });
    const { generated, cli } = bothGenerate(dir, 'x.proto');
    expect(cli).to.equal(generated);
  });

  it('an option value naming a field `extend` generates: only a statement is an extend block', () => {
    const body =
      'import "google/protobuf/descriptor.proto";\nmessage Sub {\n  optional int32 a = 1;\n}\n' +
      'message Opt {\n  optional Sub extend = 1;\n  optional int32 n = 2;\n}\n' +
      'extend google.protobuf.MessageOptions {\n  optional Opt o = 50001;\n}\n' +
      'extend google.protobuf.FieldOptions {\n  optional Opt f = 50002;\n}\n' +
      'message M {\n  option (o) = { extend: {} };\n' +
      '  optional int32 x = 1 [(f) = { n: 1 extend {} }];\n}\n' +
      'message N {\n  option (o) = { n: 2 extend < > };\n}\n';
    writeProtos(dir, { 'x.proto': `syntax = "proto2";\npackage p;\n${body}` });
    const { generated, cli } = bothGenerate(dir, 'x.proto');
    expect(cli).to.equal(generated);
  });
});
