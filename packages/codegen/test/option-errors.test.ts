import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../src/cli/cli';
import { linesOnly } from './helpers/locations';
import { PROTOC, requireProtoc } from './helpers/paths';

/*
 * Options protoc checks (a name it does not know, a custom option whose file is not imported, a
 * field or enum value an aggregate names that does not exist, a value of the wrong type) and
 * protobufjs keeps as written. Each case runs through protoc first, then granary-codegen, which
 * must refuse it at `use.proto:line` with ERR_PROTO_PARSE; the last case is a file using every
 * option shape that both accept.
 */

/** The options file every case may import: custom options of several kinds and types. */
const DEFS = `syntax = "proto2";
package o;
import "google/protobuf/descriptor.proto";
enum Kind { KIND_A = 1; KIND_B = 2; }
message Spec {
  optional string name = 1;
  optional int32 level = 2;
  optional Kind kind = 3;
  optional group Meta = 4 { repeated string tags = 5; }
  map<string, Spec> children = 6;
  optional double ratio = 7;
  extensions 100 to 200;
}
extend Spec { optional string extra = 100; }
extend google.protobuf.FieldOptions { optional Spec field_spec = 61001; }
extend google.protobuf.MessageOptions { repeated Spec specs = 61002; }
extend google.protobuf.MethodOptions { optional Kind method_kind = 61003; }
extend google.protobuf.EnumValueOptions { optional string label = 61004; }
`;

const HEAD = 'syntax = "proto3";\npackage u;\nimport "defs.proto";\n';

const REFUSED: [what: string, body: string, line: number, message: string][] = [
  [
    'a non-repeated field of an option set twice, by path or in an aggregate',
    'message M {\n  string a = 1 [(o.field_spec).name = "x", (o.field_spec).name = "y"];\n}',
    5,
    'option "(o.field_spec)".name: non-repeated field is set more than once',
  ],
  [
    'a non-repeated field set twice in an aggregate',
    'message M {\n  option (o.specs) = { name: "x" level: 1 name: "y" };\n}',
    5,
    'option "(o.specs)".name: non-repeated field is set more than once',
  ],
  [
    'one option set twice through two spellings of its name',
    'enum E {\n  Z = 0 [(o.label) = "a", (.o.label) = "b"];\n}',
    5,
    'option "(.o.label)" was already set',
  ],
  [
    'an enum value option set twice under one name',
    'enum E {\n  Z = 0 [(o.label) = "a", (o.label) = "b"];\n}',
    5,
    'option "(o.label)" was already set',
  ],
  [
    'a builtin enum value option set twice',
    'enum E {\n  Z = 0 [deprecated = true, deprecated = false];\n}',
    5,
    'option "deprecated" was already set',
  ],
  [
    'an aggregate naming an extension that does not exist',
    'message M {\n  option (o.specs) = { [o.nope]: "x" };\n}',
    5,
    'extension "o.nope" is not defined or is not an extension of "o.Spec"',
  ],
  [
    'an aggregate setting an extension twice',
    'message M {\n  option (o.specs) = { [o.extra]: "x" [o.extra]: "y" };\n}',
    5,
    'option "(o.specs)".[o.extra]: non-repeated field is set more than once',
  ],
  [
    'an aggregate giving an extension a value of the wrong type',
    'message M {\n  option (o.specs) = { children { key: "k" value { [o.extra]: 5 } } };\n}',
    5,
    '[o.extra]: 5 is not a string',
  ],
  [
    'an aggregate naming an extension with a leading dot',
    'message M {\n  option (o.specs) = { [.o.extra]: "x" };\n}',
    5,
    '[.o.extra]: an extension is named without a leading dot',
  ],
  ['an unknown builtin option', 'option java_pakage = "x";', 4, 'option "java_pakage" unknown'],
  [
    'a builtin option of the wrong type',
    'option java_multiple_files = "yes";',
    4,
    'option "java_multiple_files": "yes" is not a bool',
  ],
  [
    'an unknown custom option',
    'message M {\n  string a = 1 [(nope.x) = true];\n}',
    5,
    'option "(nope.x)" unknown',
  ],
  [
    'a field option on a message',
    'message M {\n  option (o.field_spec) = { name: "x" };\n}',
    5,
    'option "(o.field_spec)" extends google.protobuf.FieldOptions',
  ],
  [
    'a message option at file scope',
    'option (o.specs) = {};',
    4,
    'option "(o.specs)" extends google.protobuf.MessageOptions',
  ],
  [
    'an aggregate naming a field its message lacks',
    'message M {\n  string a = 1 [(o.field_spec) = { nme: "x" }];\n}',
    5,
    'message o.Spec has no field named "nme"',
  ],
  [
    'an enum value that does not exist',
    'message M {}\nservice S {\n  rpc A(M) returns (M) { option (o.method_kind) = KIND_Z; }\n}',
    6,
    'enum o.Kind has no value named KIND_Z',
  ],
  [
    'a string for an int32 in a sub-path',
    'message M {\n  string a = 1 [(o.field_spec).level = "high"];\n}',
    5,
    'option "(o.field_spec)".level: "high" is not a int32',
  ],
  [
    'a map entry value naming a missing field',
    'message M {\n  option (o.specs) = { children { key: "k" value { nam: "c" } } };\n}',
    5,
    'message o.Spec has no field named "nam"',
  ],
];

describe('options protoc refuses and protobufjs reads', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-options-'));
    writeFileSync(join(dir, 'defs.proto'), DEFS);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** protoc's exit status and granary-codegen's (with its stderr) on `files`. */
  function both(files: string[]): { protoc: number | null; cli: number; err: string } {
    const protoc = spawnSync(PROTOC, [`-I${dir}`, '-o/dev/null', ...files], { encoding: 'utf8' });
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    const cli = runCli([...files, '-I', dir, '--out', join(dir, 'gen')], io);
    return { protoc: protoc.status, cli, err: linesOnly(err.join('')) };
  }

  for (const [what, body, line, message] of REFUSED) {
    it(`${what}: refused by protoc and by granary-codegen at use.proto:${line}`, () => {
      writeFileSync(join(dir, 'use.proto'), `${HEAD}${body}\n`);
      const { protoc, cli, err } = both(['use.proto']);
      expect(protoc, 'protoc accepted it').to.equal(1);
      expect(cli).to.equal(1);
      expect(err).to.contain(`ERR_PROTO_PARSE: use.proto:${line}: `).and.contain(message);
    });
  }

  it('a custom option of a file that is only another input, not imported, is refused', () => {
    const body = 'message M {\n  string a = 1 [(o.field_spec).name = "x"];\n}\n';
    writeFileSync(join(dir, 'use.proto'), `syntax = "proto3";\npackage u;\n${body}`);
    const { protoc, cli, err } = both(['defs.proto', 'use.proto']);
    expect(protoc).to.equal(1);
    expect(cli).to.equal(1);
    expect(err).to.contain('use.proto:4: option "(o.field_spec)"');
  });

  it('every option shape protoc accepts is accepted', () => {
    writeFileSync(
      join(dir, 'use.proto'),
      `${HEAD}option java_package = "com.example.u";\noption optimize_for = SPEED;\n` +
        'message M {\n' +
        '  option (o.specs) = { name: "a" Meta { tags: "x" tags: "y" } kind: KIND_B };\n' +
        '  option (.o.specs) = { children { key: "k" value { level: 2 } } ratio: inf };\n' +
        '  option (o.specs) = { [o.extra]: "e" children: [{ key: "a" value < name: "b" > }] };\n' +
        '  string a = 1 [(o.field_spec).meta.tags = "t", (o.field_spec).kind = KIND_A];\n' +
        '  map<string, int32> m = 2 [deprecated = true, json_name = "mm"];\n' +
        "  optional string p = 3 [(o.field_spec) = { name: 'q' level: -1 }];\n" +
        '}\n' +
        'enum E {\n  E_ZERO = 0 [(o.label) = "zero", deprecated = true];\n}\n' +
        'service S {\n  rpc A(M) returns (M) { option (o.method_kind) = KIND_A; ' +
        'option idempotency_level = IDEMPOTENT; }\n}\n',
    );
    const { protoc, cli, err } = both(['use.proto']);
    expect(protoc).to.equal(0);
    expect(cli, err).to.equal(0);
  });
});
