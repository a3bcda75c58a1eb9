// The one test command (`npm test`, also what .ci/run calls): build, lint, the cycle check,
// then every package's mocha suite in dependency order (lerna), and one total line at the end.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function step(title, cmd, args, env = process.env) {
  console.log(`\n=== ${title}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.status !== 0) {
    console.error(`\n${title} failed (exit ${r.status ?? r.signal})`);
    return false;
  }
  return true;
}

const extra = process.argv.slice(2); // e.g. `npm test -- --scope @granary/core`
if (!step('build', 'npx', ['tsc', '-b'])) process.exit(1);
if (!step('lint', 'npm', ['run', 'lint', '--silent'])) process.exit(1);
if (!step('import cycles', 'node', ['scripts/check-cycles.mjs'])) process.exit(1);

const dir = mkdtempSync(join(tmpdir(), 'granary-test-summary-'));
const summary = join(dir, 'summary.jsonl');
const ok = step(
  'package suites',
  'npx',
  ['lerna', 'run', 'test', '--concurrency', '1', '--stream', '--no-bail', ...extra],
  { ...process.env, GRANARY_TEST_SUMMARY: summary },
);
let passed = 0;
let failed = 0;
let skipped = 0;
const rows = existsSync(summary) ? readFileSync(summary, 'utf8').trim().split('\n') : [];
for (const row of rows.filter(Boolean)) {
  const s = JSON.parse(row);
  passed += s.passes;
  failed += s.failures;
  skipped += s.pending;
  console.log(`  ${s.suite}: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped`);
}
rmSync(dir, { recursive: true, force: true });
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
