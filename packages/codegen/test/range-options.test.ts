import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireProtoc } from './helpers/paths';
import { bothGenerate, codegenOn, protocOn, writeProtos } from './helpers/oracle';
import { linesOnly } from './helpers/locations';

/*
 * Options protoc 3.21 refuses that granary-codegen read without a word: those of an extension
 * range (protobufjs's parser drops them), and builtin options the descriptor.proto protobufjs
 * ships has and protoc 3.21's has not. Each input is refused by protoc first; granary-codegen
 * must refuse it at the line protoc names.
 */

const RANGE_OPTION =
  'import "google/protobuf/descriptor.proto";\n' +
  'extend google.protobuf.ExtensionRangeOptions {\n  optional int32 lvl = 50000;\n}\n';

const REFUSED: [what: string, body: string, option: string][] = [
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
  ['features on a file', 'option features.field_presence = EXPLICIT;', 'features'],
];

describe('options protoc 3.21 does not know', () => {
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

  it('custom options of extension ranges protoc accepts generate, in messages and nested ones', () => {
    const body =
      `${RANGE_OPTION}message M {\n  message N {\n    extensions 100 to 199 [(lvl) = 3];\n  }\n` +
      '  extensions 5, 7 to 9 [(p.lvl) = -1];\n  extensions 20 to max [\n    (.p.lvl) = 0x10\n  ];\n}\n';
    writeProtos(dir, { 'x.proto': `syntax = "proto2";\npackage p;\n${body}` });
    const { generated, cli } = bothGenerate(dir, 'x.proto');
    expect(cli).to.equal(generated);
  });
});
