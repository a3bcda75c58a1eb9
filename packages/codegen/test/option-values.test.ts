import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../src/cli/cli';
import { linesOnly } from './helpers/locations';
import { PROTOC, requireProtoc } from './helpers/paths';

/*
 * Plain custom option values (`[(v.i32) = 2147483648]`) as protoc reads the token: its range for
 * the option's integer type, hex and octal, a sign, words for bools and enums only, strings for
 * strings only, and an option set twice. protobufjs had read each as a JavaScript number first.
 * Every case runs through protoc first.
 */

const DEFS = `syntax = "proto2";
package v;
import "google/protobuf/descriptor.proto";
enum Color { RED = 0; BLUE = 1; }
message Box { optional int32 n = 1; }
extend google.protobuf.FieldOptions {
  optional int32 i32 = 51000;  optional uint32 u32 = 51001;  optional int64 i64 = 51002;
  optional uint64 u64 = 51003; optional sint32 s32 = 51004;  optional fixed64 f64 = 51005;
  optional float flt = 51006;  optional double dbl = 51007;  optional bool flag = 51008;
  optional string str = 51009; optional bytes raw = 51010;   optional Color color = 51011;
  optional Box box = 51012;    repeated int32 many = 51013;
}
`;

const HEAD = 'syntax = "proto3";\npackage u;\nimport "defs.proto";\nmessage M {\n';

/** [what, field options, what granary-codegen's message holds] refused at use.proto:5. */
const REFUSED: [string, string, string][] = [
  ['int32 past 2^31-1', '(v.i32) = 2147483648', 'out of range for int32 option'],
  ['int32 below -2^31', '(v.i32) = -2147483649', 'out of range for int32 option'],
  ['int32 as hex past its range', '(v.i32) = 0x80000000', 'out of range for int32 option'],
  ['a negative uint32', '(v.u32) = -1', 'non-negative integer for uint32 option'],
  ['uint32 past 2^32-1', '(v.u32) = 4294967296', 'out of range for uint32 option'],
  ['int64 at 2^63', '(v.i64) = 9223372036854775808', 'out of range for int64 option'],
  ['int64 below -2^63', '(v.i64) = -9223372036854775809', 'integer out of range'],
  ['uint64 at 2^64', '(v.u64) = 18446744073709551616', 'integer out of range'],
  ['a float literal for an integer', '(v.i32) = 1e3', 'must be an integer for int32 option'],
  ['a leading zero that is not octal', '(v.s32) = 08', 'leading zero must be in octal'],
  ['inf outside an aggregate', '(v.flt) = inf', 'must be a number for float option'],
  ['-inf outside an aggregate', '(v.dbl) = -inf', "invalid '-' symbol before identifier"],
  ['a number for a bool', '(v.flag) = 1', 'must be an identifier for boolean option'],
  ['a number for an enum', '(v.color) = 1', 'must be an identifier for enum-valued option'],
  ['a negated enum value', '(v.color) = -BLUE', "invalid '-' symbol before identifier"],
  ['a number for a string', '(v.str) = 5', 'must be a quoted string for string option'],
  ['a word for bytes', '(v.raw) = abc', 'must be a quoted string for bytes option'],
  ['a number for a message', '(v.box) = 1', 'is a message'],
  ['an option set twice', '(v.i32) = 1, (v.i32) = 2', 'option "(v.i32)" was already set'],
  ['a builtin option set twice', 'deprecated = true, deprecated = false', 'already set'],
];

/** Values at the edges protoc accepts. */
const ACCEPTED = [
  '(v.i32) = 0x7fffffff, (v.u32) = 0xFFFFFFFF, (v.s32) = -017',
  '(v.i64) = -9223372036854775808, (v.u64) = 18446744073709551615, (v.f64) = 0',
  '(v.i32) = -2147483648, (v.u32) = 4294967295, (v.i64) = 9223372036854775807',
  '(v.flt) = -1e-50, (v.dbl) = 1e400, (v.flag) = false, (v.color) = BLUE',
  '(v.dbl) = .5, (v.flt) = 0x10, (v.str) = "a" \'b\', (v.raw) = "\\001"',
  '(v.many) = 1, (v.many) = 2, (v.box).n = 3',
  '(v.box) = { n: 2147483647 }',
];

describe('plain custom option values, as protoc reads their tokens', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-option-values-'));
    writeFileSync(join(dir, 'defs.proto'), DEFS);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function both(options: string): { protoc: number | null; cli: number; err: string } {
    writeFileSync(join(dir, 'use.proto'), `${HEAD}  int32 a = 1 [${options}];\n}\n`);
    const protoc = spawnSync(PROTOC, [`-I${dir}`, '-o/dev/null', 'use.proto'], {
      encoding: 'utf8',
      cwd: dir,
    });
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    const cli = runCli([join(dir, 'use.proto'), '-I', dir, '--out', join(dir, 'gen')], io);
    return { protoc: protoc.status, cli, err: linesOnly(err.join('')) };
  }

  for (const [what, options, message] of REFUSED) {
    it(`${what} (${options}): refused by protoc and at use.proto:5`, () => {
      const { protoc, cli, err } = both(options);
      expect(protoc, 'protoc accepted it').to.equal(1);
      expect(cli, 'granary-codegen accepted it').to.equal(1);
      expect(err).to.contain('ERR_PROTO_PARSE: use.proto:5: ').and.contain(message);
    });
  }

  for (const options of ACCEPTED) {
    it(`accepts what protoc accepts: ${options}`, () => {
      const { protoc, cli, err } = both(options);
      expect(protoc, 'protoc refused it').to.equal(0);
      expect(cli, err).to.equal(0);
    });
  }
});
