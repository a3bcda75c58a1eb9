// Fails when any two source files import each other in a cycle: in the compiled JS (madge, what
// Node loads), or in the .ts sources with type-only imports counted (ts-import-cycles.mjs); or
// when a package imports one above it in the layering.
import madge from 'madge';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tsImportCycles } from './ts-import-cycles.mjs';

const roots = ['packages', 'examples']
  .filter((d) => existsSync(d))
  .flatMap((d) => readdirSync(d).map((p) => join(d, p)))
  .filter((p) => existsSync(join(p, 'package.json')));

// Arrows point down only (DESIGN.md): a package may depend on those after it in this list.
const LAYERS = ['@granary/pool', '@granary/cluster', '@granary/core'];

let failed = false;
for (const dir of [...roots.flatMap((r) => [join(r, 'src'), join(r, 'test')]), 'bench/src']) {
  if (!existsSync(dir)) continue;
  for (const cycle of tsImportCycles(dir)) {
    failed = true;
    const what = cycle.typeOnly ? 'type-only import cycle' : 'import cycle';
    console.error(`${what} in ${dir} among ${cycle.files.length} files:\n  ${cycle.path}`);
    console.error(`  files: ${cycle.files.join(', ')}`);
  }
}
for (const root of roots) {
  const dist = join(root, 'dist', 'src');
  if (!existsSync(dist)) continue;
  const result = await madge(dist, { fileExtensions: ['js'], excludeRegExp: [/\.d\.ts$/] });
  const cycles = result.circular();
  if (cycles.length > 0) {
    failed = true;
    console.error(`import cycles in ${root}/src:`);
    for (const cycle of cycles) console.error('  ' + cycle.join(' -> ') + ' -> ' + cycle[0]);
  }
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const rank = LAYERS.indexOf(pkg.name);
  if (rank >= 0) {
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      const depRank = LAYERS.indexOf(dep);
      if (depRank >= 0 && depRank <= rank) {
        failed = true;
        console.error(`${pkg.name} depends on ${dep}, which is not below it in the layering`);
      }
    }
  }
}
if (failed) process.exit(1);
console.log(`no import cycles in ${roots.length} packages, .ts and JS`);
