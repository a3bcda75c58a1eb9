import { expect } from 'chai';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { runCli } from '../src/cli/cli';
import { listFiles, requireProtoc } from './helpers/paths';
import { runProtocPlugin } from './helpers/protoc';
import { scratchDir, typeCheck } from './helpers/type-check';

/*
 * Trees that vendor google/protobuf/*.proto beside their own files, generated with
 * `protoc $(find . -name '*.proto')`: the well-known files are then files to generate. Their
 * types are the runtime's, so a module declaring them again failed as it loaded.
 */

const WELL_KNOWN = ['timestamp', 'struct', 'wrappers', 'empty', 'any', 'duration', 'field_mask'];
const INPUTS = WELL_KNOWN.map((f) => `google/protobuf/${f}.proto`);

const USER_PROTO = `syntax = "proto3";
package wk.user;
import "google/protobuf/timestamp.proto";
import "google/protobuf/struct.proto";
message Event { google.protobuf.Timestamp at = 1; google.protobuf.Struct attrs = 2; }
`;

describe('well-known files named as inputs', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = scratchDir();
    mkdirSync(join(dir, 'protos', 'wk'), { recursive: true });
    writeFileSync(join(dir, 'protos', 'wk', 'user.proto'), USER_PROTO);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (out: string): void => {
    const args = ['wk/user.proto', ...INPUTS, '-I', join(dir, 'protos'), '--out', out];
    expect(runCli(args, { out: () => undefined, err: (t) => expect.fail(t) })).to.equal(0);
  };

  it('both commands write the same modules, which type-check', () => {
    cli(join(dir, 'cli'));
    mkdirSync(join(dir, 'plugin'));
    const inputs = ['wk/user.proto', ...INPUTS];
    const plugin = runProtocPlugin(join(dir, 'plugin'), join(dir, 'protos'), inputs, dir);
    expect(plugin.status, plugin.stderr).to.equal(0);
    const files = listFiles(join(dir, 'cli'));
    expect(files).to.have.length(INPUTS.length + 1);
    expect(listFiles(join(dir, 'plugin'))).to.deep.equal(files);
    for (const f of files) {
      expect(readFileSync(join(dir, 'plugin', f), 'utf8'), f).to.equal(
        readFileSync(join(dir, 'cli', f), 'utf8'),
      );
    }
    expect(typeCheck(files.map((f) => join(dir, 'cli', f)))).to.equal('');
  });

  it('a well-known module loads beside a module using those types and round-trips', () => {
    const out = join(dir, 'cli');
    cli(out);
    for (const f of listFiles(out)) {
      const source = readFileSync(join(out, f), 'utf8');
      const js = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      writeFileSync(join(out, f.replace(/\.ts$/, '.js')), js);
    }
    const load = (f: string): Record<string, unknown> =>
      require(join(out, f)) as Record<string, unknown>; // eslint-disable-line @typescript-eslint/no-require-imports
    const user = load('wk/user.granary.js');
    const timestamp = load('google/protobuf/timestamp.granary.js');
    const struct = load('google/protobuf/struct.granary.js');
    type Codec = { encode(v: object): Uint8Array; decode(b: Uint8Array): object };
    const Timestamp = timestamp['Timestamp'] as Codec;
    const Event = user['Event'] as Codec;
    expect(Timestamp.decode(Timestamp.encode({ seconds: '5', nanos: 6 }))).to.deep.equal({
      seconds: '5',
      nanos: 6,
    });
    const event = { at: { seconds: '1', nanos: 0 }, attrs: { fields: { a: { boolValue: true } } } };
    expect(Event.decode(Event.encode(event))).to.deep.equal({
      at: { seconds: '1', nanos: 0 },
      attrs: { fields: { a: { boolValue: true, kind: 'boolValue' } } },
    });
    expect(struct['NullValue']).to.have.property('NULL_VALUE', 0);
  });
});
