import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireProtoc } from './helpers/paths';
import { bothGenerate, codegenOn, protocOn, writeProtos } from './helpers/oracle';
import { linesOnly } from './helpers/locations';

/*
 * Options protoc refuses that granary-codegen read without a word: those of an extension range
 * (protobufjs's parser drops them), and `features` outside an editions file. Each input is
 * refused by protoc first; granary-codegen must refuse it at the line protoc names. Builtin
 * options added after protoc 3.21 (the protoc here), which later protoc versions take in proto2
 * and proto3 files, are accepted: real-world files use them.
 */

const RANGE_OPTION =
  'import "google/protobuf/descriptor.proto";\n' +
  'extend google.protobuf.ExtensionRangeOptions {\n  optional int32 lvl = 50000;\n}\n';

const REFUSED: [what: string, body: string, option: string][] = [
  [
    'default on an extension range',
    'message M {\n  extensions 1 to 9 [default = 5];\n}',
    'default',
  ],
  [
    'a custom option set twice on an extension range',
    `${RANGE_OPTION}message M {\n  message N {\n    extensions 1 to 9 [(lvl) = 1];\n  }\n  extensions 1 to 9 [(lvl) = 1, (p.lvl) = 2];\n}`,
    '(p.lvl)',
  ],
  [
    'an int32 custom option out of range on an extension range',
    `${RANGE_OPTION}message M {\n  extensions 1 to 9 [(lvl) = 3];\n}\nmessage N {\n  extensions 1 to 9 [(lvl) = 2147483648];\n}`,
    '(p.lvl)',
  ],
  [
    'an unknown custom option on an extension range',
    `${RANGE_OPTION}message M {\n  extensions 1 to 9 [(lvl) = 3, (nope) = 1];\n}`,
    '(nope)',
  ],
  ['features on a file', 'option features.field_presence = EXPLICIT;', 'features'],
];

/** Options protoc 22+ takes in proto2 and proto3 files (protoc 3.21 does not know them). */
const NEWER: [what: string, body: string, option: string][] = [
  [
    'verification on an extension range',
    'message M {\n  extensions 100 to 199 [verification = UNVERIFIED];\n}',
    'verification',
  ],
  [
    'declaration on an extension range',
    'message M {\n  extensions 100 to 199 [declaration = { number: 100 }];\n}',
    'declaration',
  ],
  [
    'retention on a field',
    'message M {\n  optional int32 a = 1 [retention = RETENTION_SOURCE];\n}',
    'retention',
  ],
  [
    'targets on a field',
    'message M {\n  optional int32 a = 1 [targets = TARGET_TYPE_FIELD];\n}',
    'targets',
  ],
  [
    'debug_redact on a field',
    'message M {\n  optional int32 a = 1 [debug_redact = true];\n}',
    'debug_redact',
  ],
  ['debug_redact on an enum value', 'enum E {\n  A = 0 [debug_redact = true];\n}', 'debug_redact'],
  [
    'deprecated_legacy_json_field_conflicts on a message',
    'message M {\n  option deprecated_legacy_json_field_conflicts = true;\n}',
    'deprecated_legacy_json_field_conflicts',
  ],
  [
    'deprecated_legacy_json_field_conflicts on an enum',
    'enum E {\n  option deprecated_legacy_json_field_conflicts = true;\n  A = 0;\n}',
    'deprecated_legacy_json_field_conflicts',
  ],
];

describe('options protoc refuses, and options newer than protoc 3.21', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-range-options-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [what, body, option] of REFUSED) {
    it(`${what}: protoc refuses it, granary-codegen too at its line`, () => {
      writeProtos(dir, { 'x.proto': `syntax = "proto2";\npackage p;\n${body}\n` });
      const refused = protocOn(dir, ['x.proto']);
      expect(refused.status, 'protoc accepted it').to.equal(1);
      const [, line] = /^x\.proto:(\d+):\d+: /m.exec(refused.stderr) ?? [];
      expect(refused.stderr).to.contain(option.replace(/[()]/g, ''));
      const { code, err } = codegenOn(dir, ['x.proto']);
      expect(code).to.equal(1);
      expect(linesOnly(err)).to.contain(`ERR_PROTO_PARSE: x.proto:${line}: option "${option}`);
    });
  }

  for (const [what, body, option] of NEWER) {
    it(`${what}: accepted, and generates as the file without it`, () => {
      const without = body.replace(/ \[[^\]]*\]|\n {2}option [^;]*;/, '');
      expect(without, 'the option taken out').to.not.contain(option);
      writeProtos(dir, {
        'x.proto': `syntax = "proto2";\npackage p;\n${body}\n`,
        'y.proto': `syntax = "proto2";\npackage p;\n${without}\n`,
      });
      for (const name of ['x', 'y']) {
        const run = codegenOn(dir, [`${name}.proto`], join(dir, name));
        expect(run.code, run.err).to.equal(0);
      }
      const module = (name: string) => readFileSync(join(dir, name, `${name}.granary.ts`), 'utf8');
      expect(module('x').replaceAll('x.proto', 'y.proto')).to.equal(module('y'));
    });
  }

  it('custom options of extension ranges protoc accepts generate, in messages and nested ones', () => {
    const body =
      `${RANGE_OPTION}message M {\n  message N {\n    extensions 100 to 199 [(lvl) = 3];\n  }\n` +
      '  extensions 5, 7 to 9 [(p.lvl) = -1];\n  extensions 20 to max [\n    (.p.lvl) = 0x10\n  ];\n}\n';
    writeProtos(dir, { 'x.proto': `syntax = "proto2";\npackage p;\n${body}` });
    const { generated, cli } = bothGenerate(dir, 'x.proto');
    expect(cli).to.equal(generated);
  });
});
