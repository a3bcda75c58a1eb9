import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../src/cli/cli';
import { PROTOC } from './paths';
import { runProtocPlugin } from './protoc';

/*
 * protoc as the oracle: the same files in one directory, given to protoc, to protoc with
 * protoc-gen-granary and to granary-codegen, for tests that each accepts what protoc accepts and
 * refuses what it refuses.
 */

/** `files` (name → source) written into `dir`. */
export function writeProtos(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
}

/** protoc's exit status and stderr on `inputs` below `dir` (descriptors only, no plugin). */
export function protocOn(
  dir: string,
  inputs: readonly string[],
): { status: number | null; stderr: string } {
  return spawnSync(PROTOC, [`-I${dir}`, '-o/dev/null', ...inputs], { encoding: 'utf8' });
}

/** granary-codegen's exit code, error output and generated files on `inputs` below `dir`. */
export function codegenOn(
  dir: string,
  inputs: readonly string[],
  out = join(dir, 'cli'),
): { code: number; err: string } {
  const err: string[] = [];
  const io = { out: () => undefined, err: (t: string) => err.push(t) };
  const code = runCli([...inputs, '-I', dir, '--out', out], io);
  return { code, err: err.join('') };
}

/**
 * Fails unless protoc accepts `input` below `dir` and granary-codegen writes, with no word on
 * stderr, exactly what protoc-gen-granary writes for it; returns that module.
 */
export function bothGenerate(dir: string, input: string): { generated: string; cli: string } {
  const protoc = protocOn(dir, [input]);
  if (protoc.status !== 0) throw new Error(`protoc refused ${input}: ${protoc.stderr}`);
  const cli = codegenOn(dir, [input]);
  mkdirSync(join(dir, 'plugin'), { recursive: true });
  const plugin = runProtocPlugin(join(dir, 'plugin'), dir, [input], dir);
  if (plugin.status !== 0) throw new Error(`protoc-gen-granary failed: ${plugin.stderr}`);
  const module = input.replace(/\.proto$/, '.granary.ts');
  const generated = readFileSync(join(dir, 'plugin', module), 'utf8');
  const written = cli.code === 0 ? readFileSync(join(dir, 'cli', module), 'utf8') : '';
  return { generated, cli: cli.code === 0 ? written : `exit ${cli.code}: ${cli.err}` };
}
