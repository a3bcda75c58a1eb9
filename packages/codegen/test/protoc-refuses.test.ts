import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../src/cli/cli';
import { PROTOC, requireProtoc } from './helpers/paths';
import { linesOnly } from './helpers/locations';

/*
 * Declarations protobufjs's parser reads without a word and protoc refuses: defaults that are
 * not of the field's type or range, [packed] where it cannot apply, overlapping ranges, an
 * empty oneof, `max` as a field number, a group named in lower case, an enum value beyond
 * int32. Each input is checked against protoc itself, then against granary-codegen, which must
 * refuse it with ERR_PROTO_PARSE at `file:line`.
 */

const REFUSED: [what: string, body: string, line: number, message: string][] = [
  [
    'an enum [default] no value has',
    'enum E { A = 1; }\nmessage M {\n  optional E e = 1 [default = C];\n}',
    5,
    'p.M.e: enum p.E has no value named C',
  ],
  [
    'a [default] on a repeated field',
    'message M {\n  repeated int32 a = 1 [default = 1];\n}',
    4,
    "repeated fields can't have default values",
  ],
  [
    'an int32 [default] of 2^31',
    'message M {\n  optional int32 a = 1 [default = 2147483648];\n}',
    4,
    '[default] 2147483648 is out of range for int32',
  ],
  [
    'a uint32 [default] of 2^32',
    'message M {\n  optional fixed32 a = 1 [default = 4294967296];\n}',
    4,
    'out of range for fixed32',
  ],
  [
    'a bool [default] of 1',
    'message M {\n  optional bool a = 1 [default = 1];\n}',
    4,
    'a bool must be true or false',
  ],
  [
    'a string [default] that is a number',
    'message M {\n  optional string a = 1 [default = 5];\n}',
    4,
    'a string must be a string',
  ],
  [
    'a float [default] that is a string',
    'message M {\n  optional float a = 1 [default = "1.5"];\n}',
    4,
    'a float must be a number',
  ],
  [
    '[packed = true] on a string list',
    'message M {\n  repeated string a = 1 [packed = true];\n}',
    4,
    '[packed = true] can only be specified for repeated primitive fields',
  ],
  [
    '[packed = true] on a single field',
    'message M {\n  optional int32 a = 1 [packed = true];\n}',
    4,
    '[packed = true] can only be specified',
  ],
  [
    'an enum value beyond int32',
    'enum E {\n  BIG = 2147483648;\n}',
    3,
    'p.E: value BIG = 2147483648 is out of range',
  ],
  [
    'overlapping reserved ranges',
    'message M {\n  reserved 1 to 5;\n  reserved 3;\n}',
    3,
    'p.M: reserved range 3 overlaps with already-defined range 1 to 5',
  ],
  [
    'overlapping extension ranges',
    'message M {\n  extensions 10 to 20;\n  extensions 20 to 30;\n}',
    3,
    'extension range 20 to 30 overlaps with already-defined range 10 to 20',
  ],
  [
    'an extension range over a reserved number',
    'message M {\n  extensions 10 to 20;\n  reserved 15;\n}',
    3,
    'extension range 10 to 20 overlaps with reserved range 15',
  ],
  [
    'an extension range over a field',
    'message M {\n  extensions 1 to 10;\n  optional string a = 5;\n}',
    3,
    'extension range 1 to 10 includes field "a" (5)',
  ],
  [
    'a name reserved twice',
    'message M {\n  reserved "a", "a";\n}',
    3,
    'field name "a" is reserved multiple times',
  ],
  ['an empty oneof', 'message M {\n  oneof o {}\n}', 3, 'oneof o has no fields'],
  ['a field numbered max', 'message M {\n  optional int32 a = max;\n}', 4, '"max" is not'],
  [
    'an extension numbered max',
    'message M { extensions 1 to max; }\nextend M {\n  optional int32 x = max;\n}',
    5,
    'p.x: "max" is not a field number',
  ],
  [
    'a group named in lower case',
    'message M {\n  optional group foo = 1 { optional int32 a = 2; }\n}',
    4,
    'p.M.foo: group names must start with a capital letter',
  ],
  [
    'an enum value named as a field of its scope',
    'message M {\n  enum E {\n    Z = 0;\n    a = 1;\n  }\n  optional int32 a = 1;\n}',
    4,
    'p.M.E: value a is already defined in p.M as field a (enum values share the enclosing scope)',
  ],
  [
    'an enum value named as a message of its package',
    'message M {}\nenum E {\n  M = 0;\n}',
    4,
    'p.E: value M is already defined in p as message p.M',
  ],
  [
    'an enum value named as a oneof of its scope',
    'message M {\n  oneof o { int32 b = 2; }\n  enum E {\n    o = 0;\n  }\n}',
    5,
    'p.M.E: value o is already defined in p.M as oneof o',
  ],
  [
    'an enum value named as a service',
    'message M {}\nservice S { rpc A(M) returns (M); }\nenum E {\n  S = 0;\n}',
    5,
    'value S is already defined in p as service p.S',
  ],
  [
    'an enum value named as its own enum',
    'enum E {\n  E = 0;\n}',
    3,
    'value E is already defined in p as enum p.E',
  ],
  [
    'a map whose entry type is named as a nested message',
    'message M {\n  message ItemsEntry {}\n  map<string, int32> items = 1;\n}',
    3,
    'p.M: map field items expands to entry type ItemsEntry, which is already defined as message p.M.ItemsEntry',
  ],
  [
    'two maps expanding to one entry type',
    'message M {\n  map<string, int32> by_key = 1;\n  map<string, int32> by__key = 2;\n}',
    3,
    'map fields by_key and by__key both expand to entry type ByKeyEntry',
  ],
  [
    'an rpc named as the message it takes (protoc finds the rpc first)',
    'message Ping {}\nservice S {\n  rpc Ping(Ping) returns (Ping);\n}',
    5,
    'p.S.Ping: "Ping" is not a message type (protoc finds rpc p.S.Ping first; write ".p.Ping")',
  ],
  [
    'an rpc returning a message named as another rpc of its service',
    'message Pong {}\nservice S {\n  rpc Go(Pong) returns (Pong);\n  rpc Pong(Pong) returns (Pong);\n}',
    5,
    'p.S.Go: "Pong" is not a message type (protoc finds rpc p.S.Pong first',
  ],
  [
    '[packed = true] on a list of messages',
    'message M {\n  repeated M m = 1 [packed = true];\n}',
    4,
    'p.M.m: [packed = true] can only be specified for repeated primitive fields',
  ],
  [
    '[lazy] or [unverified_lazy] on a scalar',
    'message M {\n  optional M m = 1 [lazy = true];\n  optional int32 n = 2 [unverified_lazy = true];\n}',
    5,
    'p.M.n: [unverified_lazy = true] can only be specified for submessage fields',
  ],
  [
    'a double [default] of Inf',
    'message M {\n  optional double d = 1 [default = Inf];\n}',
    4,
    'p.M.d: [default] Inf is not a number',
  ],
  [
    'a float [default] of NaN',
    'message M {\n  optional float d = 1 [default = -NaN];\n}',
    4,
    'p.M.d: [default] NaN is not a number',
  ],
  [
    'a double [default] of a lone dot',
    'message M {\n  optional double d = 1 [default = .];\n}',
    4,
    'p.M.d: [default] . is not a number',
  ],
  [
    'a [default] on a map of scalars',
    'message M {\n  map<string, int32> m = 1 [default = 1];\n}',
    4,
    "p.M.m: repeated fields can't have default values",
  ],
  [
    'a required extension',
    'message M { extensions 10 to 20; }\nextend M {\n  required int32 r = 10;\n}',
    5,
    'p.r: the extension r cannot be required',
  ],
  [
    '[json_name] on an extension',
    'message M { extensions 10 to 20; }\nextend M {\n  optional int32 j = 10 [json_name = "jj"];\n}',
    5,
    'p.j: option json_name is not allowed on extension fields',
  ],
  [
    'allow_alias on an enum without aliases',
    'enum E {\n  option allow_alias = true;\n  A = 0;\n  B = 1;\n}',
    3,
    'p.E: declares support for enum aliases but no enum values share field numbers',
  ],
];

/** protoc's exit status and stderr on `dir`/x.proto. */
function protoc(dir: string): { status: number | null; stderr: string } {
  return spawnSync(PROTOC, [`-I${dir}`, '-o/dev/null', 'x.proto'], { encoding: 'utf8' });
}

/** granary-codegen's exit code and error output on `dir`/x.proto. */
function granaryCodegen(dir: string): { code: number; err: string } {
  const err: string[] = [];
  const io = { out: () => undefined, err: (t: string) => err.push(t) };
  const code = runCli(['x.proto', '-I', dir, '--out', join(dir, 'gen')], io);
  return { code, err: linesOnly(err.join('')) };
}

/** protoc accepts `body` (a proto2 file of package p) and granary-codegen generates it. */
function expectBothAccept(dir: string, body: string): void {
  writeFileSync(join(dir, 'x.proto'), `syntax = "proto2";\npackage p;\n${body}\n`);
  const accepted = protoc(dir);
  expect(accepted.status, accepted.stderr).to.equal(0);
  expect(granaryCodegen(dir)).to.deep.equal({ code: 0, err: '' });
}

describe('declarations protoc refuses and protobufjs reads', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-refused-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [what, body, line, message] of REFUSED) {
    it(`${what}: protoc refuses it, granary-codegen too at x.proto:${line}`, () => {
      writeFileSync(join(dir, 'x.proto'), `syntax = "proto2";\npackage p;\n${body}\n`);
      expect(protoc(dir).status, 'protoc accepted it').to.equal(1);
      const { code, err } = granaryCodegen(dir);
      expect(code).to.equal(1);
      expect(err).to.contain(`ERR_PROTO_PARSE: x.proto:${line}: `).and.contain(message);
    });
  }

  it('what protoc accepts beside them still generates: max ending ranges, enum and packed', () => {
    const body =
      'enum E { NEG = -2147483648; A = 1; }\n' +
      'message M {\n  extensions 1000 to max;\n  reserved 100 to 199, 300;\n' +
      '  reserved "old";\n  repeated E es = 1 [packed = true];\n' +
      '  optional E e = 2 [default = NEG];\n  optional uint32 u = 3 [default = 4294967295];\n' +
      '  oneof o { group G = 4 { optional int32 x = 5; } }\n' +
      '  map<string, int32> lazy_map = 6 [lazy = true];\n}\n' +
      'extend M {\n  optional int32 last = 536870911;\n}';
    expectBothAccept(dir, body);
  });

  it('a float field beside a same-named, same-numbered field whose [default] is a word generates', () => {
    // The check of a float [default] looked for `d = 1 ... default = WORD` anywhere in the file:
    // B.d's enum default named A.d (a double) as the field with a word for a number.
    const body =
      'enum E { FOO = 0; BAR = 1; }\n' +
      'message A {\n  optional double d = 1;\n  optional float f = 2 [default = 2.5];\n}\n' +
      'message B {\n  optional E d = 1 [default = FOO];\n  optional E f = 2 [default = BAR];\n}\n' +
      'message C {\n  optional float g = 3;\n}\nmessage D {\n  optional E g = 3 [json_name = "x", default = BAR];\n}';
    expectBothAccept(dir, body);
  });

  it('an rpc type named as an enum value of its package: protoc refuses it, granary-codegen too', () => {
    writeFileSync(join(dir, 'm.proto'), 'syntax = "proto3";\npackage p;\nmessage Ping {}\n');
    const body =
      'syntax = "proto3";\npackage p.q;\nimport "m.proto";\n' +
      'enum Kind { KIND_UNSPECIFIED = 0; Ping = 1; }\n' +
      'service S {\n  rpc Go(Ping) returns (p.Ping);\n}\n';
    writeFileSync(join(dir, 'x.proto'), body);
    expect(protoc(dir).status, 'protoc accepted it').to.equal(1);
    const { code, err } = granaryCodegen(dir);
    expect(code).to.equal(1);
    expect(err)
      .to.contain('ERR_PROTO_PARSE: x.proto:6: p.q.S.Go: "Ping" is not a message type')
      .and.contain('protoc finds value Ping of enum p.q.Kind first; write ".p.Ping"');
  });

  it('rpc types protoc resolves past an rpc of that name generate: a dotted or full name', () => {
    const body =
      'message Ping { message Inner {} }\n' +
      'service S {\n  rpc Ping(Ping.Inner) returns (.p.Ping);\n  rpc Go(p.Ping) returns (Ping.Inner);\n}';
    expectBothAccept(dir, body);
  });

  it('proto3 fields one once lower-cased without underscores: refused at the later one', () => {
    const cases: [body: string, message: string][] = [
      [
        '  int32 foo_bar = 1;\n  int32 fooBar = 2;',
        'field "fooBar" conflicts with field "foo_bar"',
      ],
      ['  int32 a = 1;\n  optional int32 _a = 2;', 'field "_a" conflicts with field "a"'],
      ['  int32 FOO = 1;\n  oneof o { int32 foo = 2; }', 'field "foo" conflicts with field "FOO"'],
    ];
    for (const [body, message] of cases) {
      writeFileSync(
        join(dir, 'x.proto'),
        `syntax = "proto3";\npackage p;\nmessage M {\n${body}\n}\n`,
      );
      expect(protoc(dir).status, `protoc accepted ${body}`).to.equal(1);
      const { code, err } = granaryCodegen(dir);
      expect(code).to.equal(1);
      expect(err).to.contain('ERR_PROTO_PARSE: x.proto:5: ').and.contain(message);
    }
    // proto2 has no such rule: the two get distinct properties (fooBar_, fooBar).
    writeFileSync(
      join(dir, 'x.proto'),
      'syntax = "proto2";\npackage p;\nmessage M {\n  optional int32 foo_bar = 1;\n  optional int32 fooBar = 2;\n}\n',
    );
    expect(protoc(dir).status).to.equal(0);
    expect(granaryCodegen(dir)).to.deep.equal({ code: 0, err: '' });
  });
});
