/**
 * Runs one benchmark in this (fresh) process: measure, print the table, write
 * bench/results/<name>.json. Started by run.ts with --expose-gc.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { retainRuntimeShapes } from '@granary/core/internal';
import { formatTable, measure, type Benchmark } from './harness';

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name) throw new Error('usage: child.js <benchmark>');
  const mod = (await import(join(__dirname, 'benchmarks', `${name}.js`))) as {
    benchmark: Benchmark;
  };
  // Every repetition builds new systems after a forced GC: keep the runtime's object shapes (and
  // so its optimized code) alive between them, as a node running one system for its life does.
  retainRuntimeShapes();
  const result = await measure(mod.benchmark);
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(formatTable(result) + '\n\n');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`benchmark failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
