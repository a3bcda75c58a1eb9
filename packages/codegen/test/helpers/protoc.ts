import { spawnSync } from 'node:child_process';
import { PLUGIN_BIN, PROTOC } from './paths';

/**
 * `protoc --granary_out=<out> -I<includeDir> <inputs...>` with this package's protoc-gen-granary,
 * run from `cwd`: the plugin path of a test that compares it with granary-codegen.
 */
export function runProtocPlugin(
  out: string,
  includeDir: string,
  inputs: readonly string[],
  cwd: string,
): { status: number | null; stderr: string } {
  return spawnSync(
    PROTOC,
    [
      `--plugin=protoc-gen-granary=${PLUGIN_BIN}`,
      `--granary_out=${out}`,
      `-I${includeDir}`,
      ...inputs,
    ],
    { encoding: 'utf8', cwd },
  );
}
