import { runCli } from './cli';

/** Entry point of the `granary-codegen` bin. */
export function main(): void {
  process.exitCode = runCli(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
}
