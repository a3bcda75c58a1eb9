import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCli } from '../src/cli/cli';

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
    return { code, err: err.join('') };
  }

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

  it('an undefined rpc type names the file and line of the rpc', () => {
    const { code, err } = run({
      's.proto':
        'syntax = "proto3";\npackage s;\nmessage M {}\nservice S {\n  rpc Go(Nope) returns (M);\n}\n',
    });
    expect(code).to.equal(1);
    expect(err).to.contain('ERR_PROTO_PARSE: s.proto:5: rpc s.S.Go:').and.contain('Nope');
  });
});
