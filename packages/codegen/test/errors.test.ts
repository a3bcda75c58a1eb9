import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtoParseError, UnsupportedProtoError } from '../src/errors';
import { generate } from '../src/generator/generate';
import { modelFromDescriptors } from '../src/model/from-descriptors';
import { loadProtoFiles } from '../src/model/from-proto-files';
import { PLUGIN_BIN, PROTOC, PROTOS_DIR, requireProtoc } from './helpers/paths';

/** protoc with the plugin on `name` in `dir`. */
function protocPlugin(dir: string, name: string): { status: number | null; stderr: string } {
  return spawnSync(
    PROTOC,
    [`--plugin=protoc-gen-granary=${PLUGIN_BIN}`, `--granary_out=${dir}`, `-I${dir}`, name],
    { encoding: 'utf8', cwd: dir },
  );
}

/**
 * The module granary-codegen generates for `dir`/`name`, after checking that protoc with
 * protoc-gen-granary writes the same bytes.
 */
function generatedByBoth(dir: string, name: string): string {
  const [viaCli] = generate(loadProtoFiles([join(dir, name)], { includeDirs: [dir] }));
  const viaProtoc = protocPlugin(dir, name);
  expect(viaProtoc.status, viaProtoc.stderr).to.equal(0);
  const written = readFileSync(join(dir, name.replace(/\.proto$/, '.granary.ts')), 'utf8');
  expect(written).to.equal(viaCli?.content);
  return written;
}

/** Runs both front ends' model + generate on one source, returning what it throws. */
function generateFrom(dir: string, name: string): unknown {
  try {
    generate(loadProtoFiles([join(dir, name)], { includeDirs: [dir] }));
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('errors', () => {
  before(requireProtoc);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-codegen-err-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a syntax error is a ProtoParseError that starts with file:line:column, as protoc writes it', () => {
    writeFileSync(join(dir, 'bad.proto'), 'syntax = "proto3";\nmessage A { int32 x = ; }\n');
    const err = generateFrom(dir, 'bad.proto');
    expect(err).to.be.instanceOf(ProtoParseError);
    expect((err as Error).message).to.match(/^bad\.proto:2:23: illegal id ';'$/);
    // The same with CRLF line ends and a byte order mark.
    writeFileSync(join(dir, 'crlf.proto'), '\ufeffsyntax = "proto3";\r\n\r\nmessage A {\r\n}}\r\n');
    expect((generateFrom(dir, 'crlf.proto') as Error).message).to.match(/^crlf\.proto:4:\d+: /);
  });

  it('a missing import is a ProtoParseError naming the import and the importing file', () => {
    writeFileSync(join(dir, 'a.proto'), 'syntax = "proto3";\nimport "nope/b.proto";\n');
    const err = generateFrom(dir, 'a.proto');
    expect(err).to.be.instanceOf(ProtoParseError);
    expect((err as Error).message)
      .to.contain('nope/b.proto')
      .and.contain('a.proto');
  });

  it('a file outside every include directory is rejected with the option name', () => {
    writeFileSync(join(dir, 'a.proto'), 'syntax = "proto3";\n');
    expect(() => loadProtoFiles([join(dir, 'a.proto')], { includeDirs: [PROTOS_DIR] }))
      .to.throw(ProtoParseError)
      .with.property('message')
      .that.contains('--proto_path');
  });

  it('a field of a descriptor.proto type is refused the same way by both commands', () => {
    writeFileSync(
      join(dir, 'a.proto'),
      'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\n' +
        'message A { google.protobuf.FileDescriptorProto f = 1; }\n',
    );
    const err = generateFrom(dir, 'a.proto');
    expect(err).to.be.instanceOf(UnsupportedProtoError);
    expect((err as Error).message)
      .to.contain('google.protobuf.FileDescriptorProto')
      .and.contain('google/protobuf/descriptor.proto');
    const viaProtoc = protocPlugin(dir, 'a.proto');
    expect(viaProtoc.status).to.not.equal(0);
    expect(viaProtoc.stderr).to.contain(`ERR_UNSUPPORTED_PROTO: ${(err as Error).message}`);
  });

  it('an editions file is an UnsupportedProtoError in both front ends', () => {
    writeFileSync(
      join(dir, 'ed.proto'),
      '// header\nedition = "2023";\npackage ed;\nmessage A { int32 x = 1; }\n',
    );
    const err = generateFrom(dir, 'ed.proto');
    expect(err).to.be.instanceOf(UnsupportedProtoError);
    expect((err as Error).message).to.match(/^ed\.proto:2:1: ed\.proto uses editions/);
    expect(() =>
      modelFromDescriptors([{ name: 'ed.proto', syntax: 'editions', package: 'ed' }], ['ed.proto']),
    ).to.throw(UnsupportedProtoError, /ed.proto/);
  });

  it('a 64-bit [default] past 2^53 is read exactly, the same by both commands', () => {
    const source =
      'syntax = "proto2";\npackage d;\nmessage A {\n' +
      '  optional uint64 n = 1 [deprecated = true, default = 18446744073709551615];\n' +
      '  optional int64 m = 2 [default = -0x8000000000000000];\n' +
      '  optional sfixed64 o = 3 [default = 0777777777777777777777];\n' +
      '  optional int32 default = 4;\n}\n';
    writeFileSync(join(dir, 'd.proto'), source);
    expect(generatedByBoth(dir, 'd.proto'))
      .to.contain('"default":"18446744073709551615"')
      .and.contain('"default":"-9223372036854775808"')
      .and.contain('"default":"9223372036854775807"');
  });

  it('a 64-bit [default] past its range is refused at its line, as protoc refuses it', () => {
    const source =
      'syntax = "proto2";\npackage d;\nmessage A {\n' +
      '  optional int64 n = 1 [default = 9223372036854775808];\n}\n';
    writeFileSync(join(dir, 'd.proto'), source);
    expect(protocPlugin(dir, 'd.proto').status).to.not.equal(0);
    const err = generateFrom(dir, 'd.proto');
    expect(err).to.be.instanceOf(ProtoParseError);
    expect((err as Error).message).to.match(
      /^d\.proto:4:18: .*9223372036854775808 is out of range/,
    );
  });

  it('a bytes [default] with bytes above 0x7f is refused the same way by both commands', () => {
    writeFileSync(
      join(dir, 'b.proto'),
      'syntax = "proto2";\nmessage B { optional bytes raw = 1 [default = "a\\377"]; }\n',
    );
    const err = generateFrom(dir, 'b.proto');
    expect(err).to.be.instanceOf(UnsupportedProtoError);
    expect((err as Error).message)
      .to.contain('B.raw in b.proto')
      .and.contain('0x7f');
    const viaProtoc = protocPlugin(dir, 'b.proto');
    expect(viaProtoc.status).to.not.equal(0);
    expect(viaProtoc.stderr).to.contain((err as Error).message);
  });

  it('a MessageSet (message_set_wire_format) is refused the same way by both commands, at its option', () => {
    writeFileSync(
      join(dir, 'ms.proto'),
      'syntax = "proto2";\npackage ms;\nmessage Set {\n  extensions 4 to max;\n}\nmessage Outer {\n' +
        '  message Set {\n    extensions 4 to max;\n    option message_set_wire_format = true;\n  }\n}\n',
    );
    const err = generateFrom(dir, 'ms.proto');
    expect(err).to.be.instanceOf(UnsupportedProtoError);
    expect((err as Error).message).to.equal(
      'ms.proto:9:5: message ms.Outer.Set uses message_set_wire_format, which granary-codegen does not support',
    );
    const viaProtoc = protocPlugin(dir, 'ms.proto');
    expect(viaProtoc.status).to.not.equal(0);
    expect(viaProtoc.stderr).to.contain((err as Error).message);
  });

  it('granary-codegen refuses the identifier it parses __proto__ as, naming the file', () => {
    writeFileSync(
      join(dir, 'p.proto'),
      'syntax = "proto3";\nmessage __granary_proto__ { int32 x = 1; }\n',
    );
    const err = generateFrom(dir, 'p.proto');
    expect(err).to.be.instanceOf(ProtoParseError);
    expect((err as Error).message)
      .to.contain('p.proto')
      .and.contain('__granary_proto__');
  });

  it('hexadecimal numbers written 0X generate, the same by both commands, as protoc reads them', () => {
    writeFileSync(
      join(dir, 'h.proto'),
      'syntax = "proto2";\npackage h;\nenum E { Z = 0; TOP = 0X7FFFFFFF; }\n' +
        'message M {\n  optional int32 a = 0X10 [default = 0XfF];\n  extensions 0X20 to 0X30;\n}\n',
    );
    expect(generatedByBoth(dir, 'h.proto'))
      .to.contain('"id":16')
      .and.contain('"default":255')
      .and.contain('2147483647');
  });
});
