import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXAMPLE_DIR } from './paths';

/** Every GRANARY_* and OTEL_* name the example's sources read: `text('X')`, `int('X')` or process.env.X. */
export function envVarsReadBySources(): Set<string> {
  const srcDir = join(EXAMPLE_DIR, 'src');
  const names = new Set<string>();
  const reads = [
    /\b(?:text|int)\('((?:GRANARY|OTEL)_[A-Z0-9_]+)'/g,
    /process\.env\.((?:GRANARY|OTEL)_[A-Z0-9_]+)/g,
    /process\.env\[['"]((?:GRANARY|OTEL)_[A-Z0-9_]+)['"]\]/g,
  ];
  for (const file of readdirSync(srcDir, { recursive: true }).map(String)) {
    if (!file.endsWith('.ts')) continue;
    const source = readFileSync(join(srcDir, file), 'utf8');
    for (const re of reads) for (const m of source.matchAll(re)) names.add(m[1]);
  }
  return names;
}
