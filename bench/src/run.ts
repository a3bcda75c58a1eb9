/**
 * `npm run bench` runs every benchmark; `npm run bench -- <name> [...]` only those. Each runs in
 * a fresh process so one benchmark's heap and JIT state cannot colour the next.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(__dirname, 'benchmarks');
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.slice(0, -3))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${all.join(', ')}\n`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  process.stdout.write(`running ${name} ...\n`);
  const r = spawnSync(process.execPath, ['--expose-gc', join(__dirname, 'child.js'), name], {
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
