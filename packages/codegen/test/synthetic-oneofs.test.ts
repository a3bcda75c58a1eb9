import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Root } from 'protobufjs';
import type { INamespace, Type } from 'protobufjs';
import { runCli } from '../src/cli/cli';
import { PROTOC, requireProtoc } from './helpers/paths';
import { runProtocPlugin } from './helpers/protoc';
import { linesOnly } from './helpers/locations';

/*
 * protoc names the oneof of a proto3 `optional x` `_x`, with `X` in front until no field or
 * oneof of the message has the name; protobufjs names it `_x` and refuses a message whose real
 * oneof is `_x`. Each case asks protoc first (its descriptor names the oneofs).
 */

const SOURCE = `syntax = "proto3";
package p;
message M {
  optional int32 x = 1;
  oneof _x { int32 y = 2; }
  optional int32 z = 3;
  oneof X_z { int32 w = 4; }
  oneof _z { int32 v = 5; }
  optional int32 _a = 6;
  oneof __a { int32 b = 7; }
}
`;

interface Decl {
  name: string;
  field?: { name: string; number: number; oneofIndex?: number; proto3Optional?: boolean }[];
  oneofDecl?: { name: string }[];
}

/** protoc's FileDescriptorSet of `dir`/x.proto, decoded with protobufjs's descriptor.proto. */
function protocDescriptor(dir: string): { file: { messageType: Decl[] }[] } {
  const out = join(dir, 'x.pb');
  const run = spawnSync(PROTOC, [`-I${dir}`, `-o${out}`, 'x.proto'], { encoding: 'utf8' });
  expect(run.status, run.stderr).to.equal(0);
  const path = require.resolve('protobufjs/google/protobuf/descriptor.json');
  const json = JSON.parse(readFileSync(path, 'utf8')) as INamespace;
  const set = Root.fromJSON(json).lookupType('google.protobuf.FileDescriptorSet');
  return set.toObject(set.decode(readFileSync(out))) as { file: { messageType: Decl[] }[] };
}

/** The protobufjs type of `name` in the descriptor a generated module embeds. */
function embeddedType(generated: string, name: string): Type {
  const json = /defineProtoFile\(\$serialization, '[^']*', (.*)\);$/m.exec(generated)?.[1];
  const nested = JSON.parse(json ?? '{}') as NonNullable<INamespace['nested']>;
  return Root.fromJSON({ nested }).lookupType(name);
}

describe('proto3 optional fields beside oneofs named like their synthetic oneofs', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-synthetic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (): { code: number; err: string } => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    const code = runCli(['x.proto', '-I', dir, '--out', join(dir, 'cli')], io);
    return { code, err: err.join('') };
  };

  it('generate with protoc’s oneof names, each optional field alone in its oneof', () => {
    writeFileSync(join(dir, 'x.proto'), SOURCE);
    const [message] = protocDescriptor(dir).file[0].messageType;
    expect(cli()).to.deep.equal({ code: 0, err: '' });
    mkdirSync(join(dir, 'plugin'));
    const plugin = runProtocPlugin(join(dir, 'plugin'), dir, ['x.proto'], dir);
    expect(plugin.status, plugin.stderr).to.equal(0);
    const generated = readFileSync(join(dir, 'cli', 'x.granary.ts'), 'utf8');
    expect(readFileSync(join(dir, 'plugin', 'x.granary.ts'), 'utf8')).to.equal(generated);

    const type = embeddedType(generated, 'p.M');
    const oneofs = message.oneofDecl ?? [];
    for (const field of message.field ?? []) {
      const member = type.fieldsArray.find((f) => f.id === field.number);
      const oneof = oneofs[field.oneofIndex ?? -1]?.name;
      // Real oneofs are named as properties (camelCase); a synthetic one exactly as protoc names it.
      if (field.proto3Optional === true) expect(member?.partOf?.name, field.name).to.equal(oneof);
      expect(member?.partOf?.oneof, field.name).to.have.lengthOf(1);
    }
    expect(oneofs.map((o) => o.name)).to.include.members(['X_x', 'XX_z', 'X_a']);
  });

  it('a nested message with the synthetic oneof’s name: protoc refuses it, granary-codegen too', () => {
    const source =
      'syntax = "proto3";\npackage p;\nmessage M {\n  optional int32 x = 1;\n  message _x {}\n}\n';
    writeFileSync(join(dir, 'x.proto'), source);
    const refused = spawnSync(PROTOC, [`-I${dir}`, '-o/dev/null', 'x.proto'], {
      encoding: 'utf8',
    });
    expect(refused.status).to.equal(1);
    expect(refused.stderr).to.contain('x.proto:5:').and.contain('"_x" is already defined in "p.M"');
    const { code, err } = cli();
    expect(code).to.equal(1);
    expect(linesOnly(err)).to.contain(
      'ERR_PROTO_PARSE: x.proto:5: "_x" is already defined in "p.M"',
    );
  });
});
