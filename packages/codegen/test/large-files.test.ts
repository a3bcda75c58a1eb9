import { expect } from 'chai';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../src/cli/cli';
import { requireProtoc } from './helpers/paths';
import { runProtocPlugin } from './helpers/protoc';
import { scratchDir } from './helpers/type-check';

/*
 * Generated API surfaces (a whole platform's messages in one package) reach 100k+ fields. Both
 * commands failed there with 'Maximum call stack size exceeded' (a package's declarations were
 * spread into push() as arguments), and granary-codegen looked up the line of every typed field
 * in the whole source, so its time grew with the square of the file (minutes at this size).
 */

const MESSAGES = 1500;
const FIELDS = 100; // 150k declarations in one package: more than a call takes as arguments

/** A proto3 file of MESSAGES messages, every other field typed by another message or an enum. */
function largeProto(): string {
  const lines = ['syntax = "proto3";', 'package large.api.v1;', ''];
  lines.push('enum Level { LEVEL_UNSPECIFIED = 0; LEVEL_HIGH = 1; }');
  for (let m = 0; m < MESSAGES; m++) {
    lines.push(`message Resource${m} {`);
    for (let f = 1; f <= FIELDS; f++) {
      const type =
        f % 2 === 1 ? 'string' : f % 4 === 0 ? 'Level' : `Resource${(m * 7 + f) % MESSAGES}`;
      lines.push(`  ${type} field_${f} = ${f};`);
    }
    lines.push('}');
  }
  lines.push('service Catalog {', '  rpc Get(Resource0) returns (Resource1);', '}');
  return `${lines.join('\n')}\n`;
}

describe('a file of 1500 messages and 150k fields', function () {
  this.timeout(300_000); // both commands take seconds; the quadratic lookup took minutes
  before(requireProtoc);
  let dir: string;
  before(() => {
    dir = scratchDir();
    mkdirSync(join(dir, 'protos', 'large'), { recursive: true });
    writeFileSync(join(dir, 'protos', 'large', 'api.proto'), largeProto());
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('generates through both commands, byte-identical', () => {
    const errors: string[] = [];
    const args = ['large/api.proto', '-I', join(dir, 'protos'), '--out', join(dir, 'cli')];
    const code = runCli(args, { out: () => undefined, err: (t) => errors.push(t) });
    expect(errors.join('')).to.equal('');
    expect(code).to.equal(0);

    mkdirSync(join(dir, 'plugin'));
    const plugin = runProtocPlugin(
      join(dir, 'plugin'),
      join(dir, 'protos'),
      ['large/api.proto'],
      dir,
    );
    expect(plugin.stderr).to.equal('');
    expect(plugin.status).to.equal(0);

    const name = join('large', 'api.granary.ts');
    const generated = readFileSync(join(dir, 'cli', name), 'utf8');
    expect(readFileSync(join(dir, 'plugin', name), 'utf8') === generated).to.equal(true);
    expect(generated).to.contain(`export interface Resource${MESSAGES - 1} {`);
    expect(generated).to.contain(`  field_${FIELDS}: Level;`);
  });
});
