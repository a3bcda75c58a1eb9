import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate, warningLine } from '../src/generator/generate';
import { loadProtoFiles } from '../src/model/from-proto-files';
import {
  GOLDEN_DIR,
  PACKAGE_DIR,
  PLUGIN_BIN,
  PROTOC,
  PROTOS_DIR,
  goldenInputs,
  requireProtoc,
  listFiles,
} from './helpers/paths';
import { TICKER_WARNING } from './helpers/warnings';

describe('golden files', () => {
  before(requireProtoc);
  const inputs = goldenInputs();
  let outDir: string;

  beforeEach(() => {
    outDir = mkdtempSync(join(tmpdir(), 'granary-codegen-'));
  });
  afterEach(() => rmSync(outDir, { recursive: true, force: true }));

  it('covers the whole golden set of protos', () => {
    expect(inputs).to.include.members([
      'bare.proto',
      'common/types.proto',
      'deep/a/b/c/d/leaf.proto',
      'deep/x/y/branch.proto',
      'e2e/calculator.proto',
      'hostile/clash_user.proto',
      'hostile/clashes.proto',
      'hostile/services.proto',
      'hostile/types.proto',
      'keywords/keywords.proto',
      'legacy/legacy.proto',
      'legacy/uses_public.proto',
      'messages/protos.proto',
      'options/http.proto',
      'options/rest_service.proto',
      'proto2/catalog.proto',
      'proto2/supplement.proto',
      'rich/rich.proto',
      'shop/admin.proto',
      'shop/events.proto',
      'shop/orders.proto',
      'streaming/consumer.proto',
      'streaming/ticker.proto',
      'wkt/all.proto',
    ]);
    expect(listFiles(GOLDEN_DIR)).to.deep.equal(
      inputs.map((f) => f.replace(/\.proto$/, '.granary.ts')).sort(),
    );
  });

  it('granary-codegen (protobufjs, no protoc) reproduces every golden file byte for byte', () => {
    const request = loadProtoFiles(
      inputs.map((f) => join(PROTOS_DIR, f)),
      { includeDirs: [PROTOS_DIR] },
    );
    const files = generate(request);
    expect(files.map((f) => f.name).sort()).to.deep.equal(listFiles(GOLDEN_DIR));
    for (const file of files) {
      const expected = readFileSync(join(GOLDEN_DIR, file.name), 'utf8');
      expect(file.content, `${file.name} differs from test/golden (npm run golden?)`).to.equal(
        expected,
      );
    }
  });

  it('protoc with protoc-gen-granary writes the same bytes as granary-codegen', () => {
    const result = spawnSync(
      PROTOC,
      [
        `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
        `--granary_out=${outDir}`,
        `-I${PROTOS_DIR}`,
        ...inputs.map((f) => join(PROTOS_DIR, f)),
      ],
      { encoding: 'utf8' },
    );
    // The one warning (streaming rpcs left out), the text granary-codegen prints too.
    expect(result.stderr).to.equal(warningLine(TICKER_WARNING));
    expect(result.status).to.equal(0);
    expect(listFiles(outDir)).to.deep.equal(listFiles(GOLDEN_DIR));
    for (const name of listFiles(outDir)) {
      const same = readFileSync(join(outDir, name)).equals(readFileSync(join(GOLDEN_DIR, name)));
      expect(same, `${name} from protoc differs from test/golden`).to.equal(true);
    }
  });

  it('protoc generates only file_to_generate, not the files they import', () => {
    const result = spawnSync(
      PROTOC,
      [
        `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
        `--granary_out=${outDir}`,
        `-I${PROTOS_DIR}`,
        join(PROTOS_DIR, 'shop', 'orders.proto'),
      ],
      { encoding: 'utf8' },
    );
    expect(result.status, result.stderr).to.equal(0);
    expect(listFiles(outDir)).to.deep.equal(['shop/orders.granary.ts']);
  });

  it('protoc passes --granary_opt to the plugin (import_extension=.js)', () => {
    const result = spawnSync(
      PROTOC,
      [
        `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
        `--granary_out=${outDir}`,
        '--granary_opt=import_extension=.js',
        `-I${PROTOS_DIR}`,
        join(PROTOS_DIR, 'shop', 'orders.proto'),
      ],
      { encoding: 'utf8' },
    );
    expect(result.status, result.stderr).to.equal(0);
    const content = readFileSync(join(outDir, 'shop', 'orders.granary.ts'), 'utf8');
    expect(content).to.contain("import * as $common_types from '../common/types.granary.js';");
    expect(content).to.contain("import * as $shop_events from './events.granary.js';");
  });

  it('protoc reports an unknown --granary_opt as an error', () => {
    const result = spawnSync(
      PROTOC,
      [
        `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
        `--granary_out=${outDir}`,
        '--granary_opt=turbo=on',
        `-I${PROTOS_DIR}`,
        join(PROTOS_DIR, 'bare.proto'),
      ],
      { encoding: 'utf8' },
    );
    expect(result.status).to.not.equal(0);
    expect(result.stderr).to.contain('ERR_INVALID_OPTION').and.contain('turbo');
  });

  it('the installed bins (node_modules/.bin, as in the README) produce the golden output', () => {
    const bin = join(PACKAGE_DIR, '..', '..', 'node_modules', '.bin');
    mkdirSync(join(outDir, 'protoc')); // protoc writes into an existing directory only
    const viaProtoc = spawnSync(
      PROTOC,
      [
        `--plugin=protoc-gen-granary=${join(bin, 'protoc-gen-granary')}`,
        `--granary_out=${join(outDir, 'protoc')}`,
        `-I${PROTOS_DIR}`,
        join(PROTOS_DIR, 'messages', 'protos.proto'),
      ],
      { encoding: 'utf8' },
    );
    expect(viaProtoc.status, viaProtoc.stderr).to.equal(0);
    const viaCli = spawnSync(
      join(bin, 'granary-codegen'),
      [
        join(PROTOS_DIR, 'messages', 'protos.proto'),
        '-I',
        PROTOS_DIR,
        '--out',
        join(outDir, 'cli'),
      ],
      { encoding: 'utf8' },
    );
    expect(viaCli.status, viaCli.stderr).to.equal(0);
    const golden = readFileSync(join(GOLDEN_DIR, 'messages', 'protos.granary.ts'), 'utf8');
    for (const out of ['protoc', 'cli']) {
      expect(readFileSync(join(outDir, out, 'messages', 'protos.granary.ts'), 'utf8')).to.equal(
        golden,
      );
    }
  });
});
