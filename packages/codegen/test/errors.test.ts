import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NameClashError,
  ProtoParseError,
  StreamingRpcError,
  UnsupportedProtoError,
} from '../src/errors';
import { generate } from '../src/generator/generate';
import { modelFromDescriptors } from '../src/model/from-descriptors';
import { loadProtoFiles } from '../src/model/from-proto-files';
import { CLI_BIN, PLUGIN_BIN, PROTOC, PROTOS_DIR, requireProtoc } from './helpers/paths';

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

  describe('streaming rpcs', () => {
    it('granary-codegen throws StreamingRpcError naming the rpc and the file', () => {
      const err = generateFrom(PROTOS_DIR, 'errors/streaming.proto');
      expect(err).to.be.instanceOf(StreamingRpcError);
      const e = err as StreamingRpcError;
      expect(e.code).to.equal('ERR_STREAMING_RPC');
      expect(e.rpc).to.equal('granary.test.errors.Clock.Watch');
      expect(e.file).to.equal('errors/streaming.proto');
      expect(e.message)
        .to.contain('granary.test.errors.Clock.Watch')
        .and.contain('errors/streaming.proto');
    });

    it('protoc fails with the plugin error naming the rpc and file, and no stack trace', () => {
      const result = spawnSync(
        PROTOC,
        [
          `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
          `--granary_out=${dir}`,
          `-I${PROTOS_DIR}`,
          join(PROTOS_DIR, 'errors', 'streaming.proto'),
        ],
        { encoding: 'utf8' },
      );
      expect(result.status).to.not.equal(0);
      expect(result.stderr).to.contain('ERR_STREAMING_RPC');
      expect(result.stderr).to.contain('granary.test.errors.Clock.Watch');
      expect(result.stderr).to.contain('errors/streaming.proto');
      expect(result.stderr).to.not.match(/\n\s+at /);
      expect(readdirSync(dir)).to.deep.equal([]);
    });

    it('granary-codegen exits 1 with one error line and writes nothing', () => {
      const out = join(dir, 'out');
      const result = spawnSync(
        process.execPath,
        [CLI_BIN, join(PROTOS_DIR, 'errors', 'streaming.proto'), '-I', PROTOS_DIR, '--out', out],
        { encoding: 'utf8' },
      );
      expect(result.status).to.equal(1);
      expect(result.stderr.trim().split('\n')).to.have.length(1);
      expect(result.stderr).to.contain('ERR_STREAMING_RPC').and.contain('Clock.Watch');
      expect(readdirSync(dir)).to.deep.equal([]);
    });
  });

  it('a syntax error is a ProtoParseError that names the file', () => {
    writeFileSync(join(dir, 'bad.proto'), 'syntax = "proto3";\nmessage A { int32 x = ; }\n');
    const err = generateFrom(dir, 'bad.proto');
    expect(err).to.be.instanceOf(ProtoParseError);
    expect((err as Error).message).to.contain('bad.proto');
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

  it('an unsupported google/protobuf import is an UnsupportedProtoError', () => {
    writeFileSync(
      join(dir, 'a.proto'),
      'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\n' +
        'message A { google.protobuf.FileDescriptorProto f = 1; }\n',
    );
    const err = generateFrom(dir, 'a.proto');
    expect(err).to.be.instanceOf(UnsupportedProtoError);
    expect((err as Error).message).to.contain('google/protobuf/descriptor.proto');
  });

  it('protoc reports an unsupported google/protobuf type through the plugin', () => {
    writeFileSync(
      join(dir, 'a.proto'),
      'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\n' +
        'message A { google.protobuf.FileDescriptorProto f = 1; }\n',
    );
    const result = spawnSync(
      PROTOC,
      [`--plugin=protoc-gen-granary=${PLUGIN_BIN}`, `--granary_out=${dir}`, `-I${dir}`, 'a.proto'],
      { encoding: 'utf8', cwd: dir },
    );
    expect(result.status).to.not.equal(0);
    expect(result.stderr).to.contain('ERR_UNSUPPORTED_PROTO').and.contain('FileDescriptorProto');
  });

  it('two rpcs that map to one method name are a NameClashError', () => {
    writeFileSync(
      join(dir, 'a.proto'),
      'syntax = "proto3";\nmessage M {}\nservice S { rpc Get(M) returns (M); rpc get(M) returns (M); }\n',
    );
    expect(generateFrom(dir, 'a.proto')).to.be.instanceOf(NameClashError);
  });

  it('a message named like a generated service class is a NameClashError', () => {
    writeFileSync(
      join(dir, 'a.proto'),
      'syntax = "proto3";\nmessage PingGrain {}\nservice Ping { rpc Go(PingGrain) returns (PingGrain); }\n',
    );
    const err = generateFrom(dir, 'a.proto');
    expect(err).to.be.instanceOf(NameClashError);
    expect((err as Error).message).to.contain('PingGrain');
  });

  it('an editions file is an UnsupportedProtoError in both front ends', () => {
    writeFileSync(
      join(dir, 'ed.proto'),
      'edition = "2023";\npackage ed;\nmessage A { int32 x = 1; }\n',
    );
    expect(generateFrom(dir, 'ed.proto')).to.be.instanceOf(UnsupportedProtoError);
    expect(() =>
      modelFromDescriptors([{ name: 'ed.proto', syntax: 'editions', package: 'ed' }], ['ed.proto']),
    ).to.throw(UnsupportedProtoError, /ed.proto/);
  });

  it('a proto2 group is an UnsupportedProtoError naming the field', () => {
    writeFileSync(
      join(dir, 'g.proto'),
      'syntax = "proto2";\nmessage A { optional group Inner = 1 { optional int32 x = 2; } }\n',
    );
    const err = generateFrom(dir, 'g.proto');
    expect(err).to.be.instanceOf(UnsupportedProtoError);
    expect((err as Error).message).to.match(/group/i);
    expect(() =>
      modelFromDescriptors(
        [
          {
            name: 'g.proto',
            syntax: 'proto2',
            messageType: [{ name: 'A', field: [{ name: 'inner', number: 1, type: 'TYPE_GROUP' }] }],
          },
        ],
        ['g.proto'],
      ),
    ).to.throw(UnsupportedProtoError, /A.inner in g.proto/);
  });
});
