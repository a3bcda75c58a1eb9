import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CLI_BIN, GENERATED_FILE, PLUGIN_BIN, PROTOC, PROTOS_DIR } from './helpers/paths';

describe('generated code of protos/protos.proto', () => {
  let outDir: string;

  beforeEach(() => {
    outDir = mkdtempSync(join(tmpdir(), 'ping-pong-codegen-'));
  });

  afterEach(() => {
    rmSync(outDir, { recursive: true, force: true });
  });

  it('the checked-in src/gen/protos.granary.ts is what granary-codegen writes (no protoc)', () => {
    execFileSync(process.execPath, [CLI_BIN, 'protos.proto', '-I', '.', '--out', outDir], {
      cwd: PROTOS_DIR,
    });
    expect(readdirSync(outDir)).to.deep.equal(['protos.granary.ts']);
    const generated = readFileSync(join(outDir, 'protos.granary.ts'), 'utf8');
    expect(generated).to.equal(readFileSync(GENERATED_FILE, 'utf8'));
  });

  it("Debian's protoc with protoc-gen-granary writes the same file", () => {
    execFileSync(
      PROTOC,
      [
        `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
        `--granary_out=${outDir}`,
        '-I',
        '.',
        'protos.proto',
      ],
      { cwd: PROTOS_DIR },
    );
    expect(readdirSync(outDir)).to.deep.equal(['protos.granary.ts']);
    const generated = readFileSync(join(outDir, 'protos.granary.ts'), 'utf8');
    expect(generated).to.equal(readFileSync(GENERATED_FILE, 'utf8'));
  });

  it('declares PingMessage, PongMessage and service Ponger exactly as issue 10 gives them', () => {
    const proto = readFileSync(join(PROTOS_DIR, 'protos.proto'), 'utf8')
      .replace(/\/\/.*$/gm, '')
      .replace(/\s+/g, ' ')
      .trim();
    expect(proto).to.equal(
      'syntax = "proto3"; package messages; ' +
        'message PingMessage { uint64 cnt = 1; } ' +
        'message PongMessage { uint64 cnt = 1; } ' +
        'service Ponger { rpc Ping(PingMessage) returns (PongMessage) {} }',
    );
  });
});
