import { runPlugin } from './plugin';

/**
 * Entry point of the `protoc-gen-granary` bin: reads the CodeGeneratorRequest from stdin and
 * writes the CodeGeneratorResponse to stdout. Errors travel in the response (protoc prints
 * them and fails), so the exit code is 0 unless stdin/stdout themselves fail.
 */
export function main(): void {
  const chunks: Buffer[] = [];
  process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
  process.stdin.on('end', () => {
    process.stdout.write(runPlugin(Buffer.concat(chunks), (line) => process.stderr.write(line)));
  });
}
