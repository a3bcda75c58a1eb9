import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { runCli } from '../src/cli/cli';
import { PROTOC } from './helpers/paths';
import { linesOnly } from './helpers/locations';

/*
 * Broken inputs as users write them: granary-codegen answers each with one line naming the file
 * and line, exit code 1 and no stack trace, where protoc would also refuse the input.
 */

describe('granary-codegen on broken inputs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-parse-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes `files` below `dir` and runs the CLI on the first; returns exit code and stderr. */
  function run(files: Record<string, string>): { code: number; err: string } {
    for (const [name, source] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), source);
    }
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    const first = join(dir, Object.keys(files)[0]);
    const code = runCli([first, '-I', dir, '--out', join(dir, 'gen')], io);
    expect(err.join('')).to.not.match(/\n\s+at /);
    return { code, err: linesOnly(err.join('')) };
  }

  it('a missing import is an ERR_PROTO_PARSE at the line of the import', () => {
    const { code, err } = run({ 'm.proto': 'syntax = "proto3";\n\nimport "gone/x.proto";\n' });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: m.proto:3: import "gone/x.proto" not found');
  });

  it('an input that does not exist, or is a directory, is an ERR_PROTO_PARSE naming it', () => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    expect(runCli(['none.proto', '-I', dir, '--out', join(dir, 'gen')], io)).to.equal(1);
    expect(runCli([dir, '-I', tmpdir(), '--out', join(dir, 'gen')], io)).to.equal(1);
    expect(err[0]).to.contain('ERR_PROTO_PARSE: none.proto: no such file');
    expect(err[1]).to.match(/ERR_PROTO_PARSE: cannot read .*EISDIR/);
  });

  it('an input shadowed by the same name in an earlier include directory is refused', () => {
    for (const root of ['one', 'two']) {
      mkdirSync(join(dir, root, 's'), { recursive: true });
      writeFileSync(join(dir, root, 's', 'm.proto'), `syntax = "proto3";\npackage ${root};\n`);
    }
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    const args = ['-I', join(dir, 'one'), '-I', join(dir, 'two'), '--out', join(dir, 'gen')];
    expect(runCli([join(dir, 'two', 's', 'm.proto'), ...args], io)).to.equal(1);
    expect(err.join('')).to.contain('ERR_PROTO_PARSE: ').and.contain('input is shadowed');
    expect(runCli([join(dir, 'one', 's', 'm.proto'), ...args], io)).to.equal(0);
  });

  it('an import cycle is an ERR_PROTO_PARSE at the import that closes it', () => {
    const { code, err } = run({
      'cyc/a.proto':
        'syntax = "proto3";\npackage cyc;\nimport "cyc/b.proto";\nmessage A { B b = 1; }\n',
      'cyc/b.proto':
        'syntax = "proto3";\npackage cyc;\n\nimport "cyc/a.proto";\nmessage B { A a = 1; }\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: cyc/b.proto:4:');
    expect(err).to.contain('cyc/a.proto -> cyc/b.proto -> cyc/a.proto');
  });

  it('an undefined field type names the file and line of the field, in an imported file too', () => {
    const { code, err } = run({
      'top.proto':
        'syntax = "proto3";\npackage p;\nimport "dep/dep.proto";\nmessage T { D d = 1; }\n',
      'dep/dep.proto': 'syntax = "proto3";\npackage p;\nmessage D {\n  Missing m = 7;\n}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: dep/dep.proto:4: field p.D.m:').and.contain('Missing');
  });

  it('a syntax protoc does not know is refused at its line; adjacent literals join', () => {
    const proto4 = run({ 'm.proto': '// about\nsyntax = "proto4";\nmessage A {}\n' });
    expect(proto4.code).to.equal(1);
    expect(proto4.err).to.contain(
      'ERR_PROTO_PARSE: m.proto:2: unrecognized syntax identifier "proto4"',
    );
    const joined = run({ 'j.proto': 'syntax = "proto" \'3\';\nmessage A { int32 x = 1; }\n' });
    expect(joined.code, joined.err).to.equal(0);
  });

  it('an import listed twice is refused at the second one, as protoc does', () => {
    const { code, err } = run({
      'm.proto': 'syntax = "proto3";\nimport "d.proto";\nimport weak "d.proto";\n',
      'd.proto': 'syntax = "proto3";\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: m.proto:3: import "d.proto" was listed twice');
  });

  it('a oneof or a group named as a field of its message is refused at its line', () => {
    const oneof = run({
      'o.proto':
        'syntax = "proto3";\nmessage A {\n  int32 k = 1;\n  oneof k {\n    int32 x = 2;\n  }\n}\n',
    });
    expect(oneof.err).to.contain('ERR_PROTO_PARSE: o.proto:4: "A.k" is already defined in o.proto');
    const group = run({
      'g.proto':
        'syntax = "proto2";\nmessage A {\n  optional int32 foo = 1;\n  optional group Foo = 2 {}\n}\n',
    });
    expect(group.err).to.contain(
      'ERR_PROTO_PARSE: g.proto:4: "A.foo" is already defined in g.proto',
    );
  });

  it('an extension number used twice on an options message is refused at the second use', () => {
    const { code, err } = run({
      'x.proto':
        'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\nextend google.protobuf.FieldOptions {\n  string a = 50000;\n  string b = 50000;\n}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain(
      'ERR_PROTO_PARSE: x.proto:5: extension b: extension number 50000 has already been used in "google.protobuf.FieldOptions" by extension "a"',
    );
  });

  // Inputs where granary-codegen points where protoc does: both name file:line:column.
  const SAME_COLUMN: [what: string, source: string][] = [
    ['a syntax error', 'syntax = "proto3";\nmessage A { int32 x = 1.0; }\n'],
    ['a missing ;', 'syntax = "proto3";\nmessage A {}\nservice S { rpc M(A) returns (A) }\n'],
    ['an unknown syntax', '\nsyntax = "proto4";\n'],
    ['an import listed twice', 'syntax = "proto3";\nimport "d.proto";\nimport "d.proto";\n'],
    ['an unknown option', 'syntax = "proto3";\n\n  option foo_bar = 1;\n'],
    [
      'an unknown option after a value granary-codegen rewrites before parsing',
      'syntax = "proto3";\npackage p;\nimport "google/protobuf/descriptor.proto";\n' +
        'extend google.protobuf.FieldOptions { int32 o = 50001; }\n' +
        'message M { int32 x = 1 [(o) = 123456789, (nope) = 2]; }\n',
    ],
    [
      'a JSON name clash',
      'syntax = "proto3";\nmessage A { int32 foo_bar = 1; int32 fooBar = 2; }\n',
    ],
  ];
  for (const [what, source] of SAME_COLUMN) {
    it(`${what}: at the line and column protoc names`, () => {
      writeFileSync(join(dir, 'd.proto'), 'syntax = "proto3";\n');
      writeFileSync(join(dir, 'c.proto'), source);
      const protoc = spawnSync(PROTOC, [`-I${dir}`, '-o/dev/null', 'c.proto'], {
        encoding: 'utf8',
      });
      const at = /^c\.proto:\d+:\d+: /m.exec(protoc.stderr)?.[0];
      expect(at, protoc.stderr).to.be.a('string');
      const err: string[] = [];
      const io = { out: () => undefined, err: (t: string) => err.push(t) };
      expect(runCli(['c.proto', '-I', dir, '--out', join(dir, 'gen')], io)).to.equal(1);
      expect(err.join('')).to.contain(`ERR_PROTO_PARSE: ${at ?? ''}`);
    });
  }

  // Each refused by protoc (`protoc --descriptor_set_out=/dev/null` prints the same line).
  const refused: [what: string, body: string, message: string][] = [
    ['field number 0', 'message A {\n  string a = 0;\n}', 'p.A.a: field number 0'],
    ['field number 2^29', 'message A {\n  string a = 536870912;\n}', 'field number 536870912'],
    ['field number 19000', 'message A {\n  string a = 19000;\n}', 'protocol buffer library'],
    [
      'a field declared before the reserved range it is in',
      'message A {\n  int32 top = 536870911;\n  reserved 1000 to max;\n}',
      'p.A.top: field number 536870911 is reserved',
    ],
    [
      'a field declared before its reserved name',
      'message A {\n  int32 gone = 1;\n  reserved "gone";\n}',
      'field name gone is reserved',
    ],
    ['a proto3 enum not starting at zero', 'enum E {\n  E_ONE = 1;\n}', 'p.E: the first value'],
    [
      'two enums of one scope with one value name',
      'enum A { UNKNOWN = 0; }\nenum B {\n  UNKNOWN = 0;\n}',
      'value UNKNOWN is already defined in p by enum p.A',
    ],
    ['a proto3 [default]', 'message A {\n  string s = 1 [default = "x"];\n}', 'proto3'],
    [
      'a dotted type name whose first part is an inner scope without the rest',
      'message b { message X {} }\nmessage M { message b {}\n  b.X x = 1;\n}',
      'p.M.x: "b.X" is resolved to "p.M.b.X", which is not defined',
    ],
    [
      'a proto3 group',
      'message A {\n  group G = 1 {}\n}',
      'p.A.g: groups are not supported in proto3 syntax',
    ],
    [
      'a proto3 extension range',
      'message A {\n  extensions 100 to 199;\n}',
      'p.A: extension ranges are not allowed in proto3',
    ],
  ];
  for (const [what, body, message] of refused) {
    it(`${what} is an ERR_PROTO_PARSE at its line`, () => {
      const { code, err } = run({ 'x.proto': `syntax = "proto3";\npackage p;\n${body}\n` });
      expect(code).to.equal(1);
      expect(err).to.contain('ERR_PROTO_PARSE: x.proto:').and.contain(message);
      expect(err).to.match(/x\.proto:[3-5]: /);
    });
  }

  it('a dotted type name protoc resolves (past a field of its first part, or inner) generates', () => {
    const source =
      'syntax = "proto3";\npackage p.q;\nmessage X { int32 top = 1; }\n' +
      'message b { message X { string inner = 1; } }\n' +
      'message M {\n  int32 b = 1;\n  b.X x = 2;\n  message q { message X {} }\n  q.X y = 3;\n' +
      '  p.q.X z = 4;\n}\n';
    expect(run({ 'r.proto': source })).to.deep.equal({ code: 0, err: '' });
  });

  it('a number used twice or reserved, and a reserved value name, name their line', () => {
    const head = 'syntax = "proto2";\npackage n;\nmessage A {\n  optional int32 a = 1;\n}\n';
    const cases: [body: string, expected: string][] = [
      [
        'message B {\n  optional int32 x = 1;\n\n  optional int32 y = 1;\n}',
        'n.proto:9: duplicate id 1 in Type B',
      ],
      ['enum E {\n  E_A = 1;\n  E_B = 2;\n  E_C = 2;\n}', 'n.proto:9: duplicate id 2 in Enum E'],
      [
        'message K {\n  reserved 6;\n  optional int32 k = 6;\n}',
        'n.proto:8: id 6 is reserved in Type K',
      ],
      [
        'enum R {\n  reserved "R_B";\n  R_A = 1;\n  R_B = 2;\n}',
        "n.proto:9: name 'R_B' is reserved in Enum R",
      ],
    ];
    for (const [body, expected] of cases) {
      const { code, err } = run({ 'n.proto': `${head}${body}\n` });
      expect(code).to.equal(1);
      expect(err).to.contain(`ERR_PROTO_PARSE: ${expected}`);
    }
  });

  it('a message defined twice in one file names the line of the second', () => {
    const { code, err } = run({
      'd.proto': 'syntax = "proto3";\npackage d;\nmessage A {}\n\nmessage A { int32 x = 1; }\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: d.proto:5: "d.A" is already defined in d.proto');
  });

  it('a message defined in two imported files names both files', () => {
    const { code, err } = run({
      'use.proto': 'syntax = "proto3";\npackage d;\nimport "one.proto";\nimport "two.proto";\n',
      'one.proto': 'syntax = "proto3";\npackage d;\nmessage D {}\n',
      'two.proto': 'syntax = "proto3";\npackage d;\n\nmessage D {}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('two.proto:4: "d.D" is already defined in one.proto');
  });

  it("an extension outside the extendee's extension ranges is refused at its line", () => {
    const { code, err } = run({
      'e.proto':
        'syntax = "proto2";\npackage e;\nmessage B {\n  extensions 100 to 199;\n}\n' +
        'extend B {\n  optional int32 x = 200;\n}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('e.proto:7: e.x: e.B does not declare 200 as an extension number');
  });

  it('a type of a file that is not imported is refused, as protoc refuses it', () => {
    const { code, err } = run({
      'app.proto':
        'syntax = "proto3";\npackage app;\nimport "mid.proto";\nmessage A {\n  lib.L l = 1;\n}\n',
      'mid.proto': 'syntax = "proto3";\npackage mid;\nimport "lib.proto";\n',
      'lib.proto': 'syntax = "proto3";\npackage lib;\nmessage L {}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('app.proto:5: "lib.L" is defined in lib.proto, which app.proto');
  });

  it('a type of an imported editions file is an ERR_UNSUPPORTED_PROTO where it is used', () => {
    const { code, err } = run({
      'use.proto':
        'syntax = "proto3";\npackage u;\nimport "ed.proto";\nmessage U {\n  ed.E e = 1;\n}\n',
      'ed.proto': 'edition = "2023";\npackage ed;\nmessage E { string x = 1; }\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_UNSUPPORTED_PROTO: use.proto:5: "ed.E" is defined in ed.proto');
  });

  it('a proto2 enum in a proto3 message is refused, as protoc refuses it', () => {
    const { code, err } = run({
      'use.proto':
        'syntax = "proto3";\npackage u;\nimport "c.proto";\nmessage U {\n  c.C e = 1;\n}\n',
      'c.proto': 'syntax = "proto2";\npackage c;\nenum C { C_ONE = 1; }\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: use.proto:5: enum "c.C" of proto2 file c.proto');
  });

  for (const path of ['../lib/l.proto', './lib/l.proto', 'lib//l.proto']) {
    it(`import "${path}" is refused at its line, as protoc refuses it`, () => {
      const { code, err } = run({
        'app/a.proto': `syntax = "proto3";\npackage a;\nimport "${path}";\n`,
        'lib/l.proto': 'syntax = "proto3";\npackage lib;\nmessage L {}\n',
      });
      expect(code).to.equal(1);
      expect(err).to.contain(`ERR_PROTO_PARSE: app/a.proto:3: import "${path}": backslashes`);
    });
  }

  it('a type re-exported by an import public is visible', () => {
    const { code } = run({
      'app.proto':
        'syntax = "proto3";\npackage app;\nimport "mid.proto";\nmessage A { lib.L l = 1; }\n',
      'mid.proto': 'syntax = "proto3";\npackage mid;\nimport public "lib.proto";\n',
      'lib.proto': 'syntax = "proto3";\npackage lib;\nmessage L {}\n',
    });
    expect(code).to.equal(0);
  });

  it('an undefined rpc type names the file and line of the rpc', () => {
    const { code, err } = run({
      's.proto':
        'syntax = "proto3";\npackage s;\nmessage M {}\nservice S {\n  rpc Go(Nope) returns (M);\n}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: s.proto:5: rpc s.S.Go:').and.contain('Nope');
  });
});
