import { join } from 'node:path';
import { DemoOptionError } from '../errors';
import { DEMO_USAGE, parseDemoOptions } from './demo-options';
import { DemoRunner } from './demo-runner';

/**
 * `npm run demo -- [options]`: runs the demo cluster and exits 0 when pongs flowed and every
 * node stopped cleanly. Ctrl-C (SIGINT) or SIGTERM stops the nodes gracefully; a second Ctrl-C
 * kills them.
 */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(DEMO_USAGE);
    return;
  }
  let options;
  try {
    options = parseDemoOptions(argv);
  } catch (err) {
    if (!DemoOptionError.is(err)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  const exampleDir = join(__dirname, '..', '..', '..');
  const runner = new DemoRunner(
    options,
    { line: (t) => process.stdout.write(`${t}\n`) },
    exampleDir,
  );
  const onSignal = (): void => runner.interrupt();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const result = await runner.run();
    process.exitCode = result.ok ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
