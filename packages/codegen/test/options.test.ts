import { expect } from 'chai';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../src/cli/cli';
import { loadProtoFiles } from '../src/model/from-proto-files';
import { GOLDEN_DIR, PROTOS_DIR } from './helpers/paths';
import { scratchDir, typeCheck } from './helpers/type-check';

describe('custom options (test/protos/options)', () => {
  let dir: string;
  beforeEach(() => {
    dir = scratchDir();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('granary-codegen loads descriptor.proto and the options file, and ignores the options', () => {
    const request = loadProtoFiles([join(PROTOS_DIR, 'options', 'rest_service.proto')], {
      includeDirs: [PROTOS_DIR],
    });
    const [file] = request.files;
    expect(file.extensions).to.deep.equal([]);
    expect(file.services[0].methods.map((m) => m.name)).to.deep.equal([
      'GetShelf',
      'PutShelf',
      'Purge',
    ]);
    // The option declarations are indexed like any type, under their own file.
    expect(request.types.get('google.protobuf.MethodOptions')?.file).to.equal(
      'google/protobuf/descriptor.proto',
    );
    expect(request.types.get('granary.test.options.Route')?.file).to.equal('options/http.proto');
  });

  it('a service that imports only options generates alone: no import of the options module', () => {
    const code = runCli(
      [join(PROTOS_DIR, 'options', 'rest_service.proto'), '-I', PROTOS_DIR, '--out', dir],
      {
        out: () => undefined,
        err: (text) => expect.fail(text),
      },
    );
    expect(code).to.equal(0);
    const module = readFileSync(join(dir, 'options', 'rest_service.granary.ts'), 'utf8');
    expect(module).to.equal(
      readFileSync(join(GOLDEN_DIR, 'options', 'rest_service.granary.ts'), 'utf8'),
    );
    expect(module).to.not.contain('http.granary');
    // Only this one module exists in the directory, and it compiles under the strict flags.
    expect(typeCheck([join(dir, 'options', 'rest_service.granary.ts')])).to.equal('');
  });

  it('the options file itself generates its messages (the extensions of descriptor types are left out)', () => {
    const golden = readFileSync(join(GOLDEN_DIR, 'options', 'http.granary.ts'), 'utf8');
    expect(golden).to.contain('export interface Route {').and.contain('export enum Presence {');
    expect(golden).to.not.contain('extend').and.not.contain('MethodOptions');
  });
});
