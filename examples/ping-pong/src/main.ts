import { readConfig } from './config';
import type { NodeRole } from './config';
import { ConfigError } from './errors';
import { createNodeLogger } from './log';
import { startNode } from './node';
import type { RunningNode } from './node';

/**
 * Entry point of a node process (`node examples/ping-pong/bin/ponger.cjs`), configured by
 * GRANARY_* environment variables. SIGTERM or SIGINT (and, under the demo runner, the end of
 * stdin) makes it leave the cluster gracefully and exit 0, even while it is still joining.
 */
export async function main(role: NodeRole): Promise<void> {
  let config;
  try {
    config = readConfig(role);
  } catch (err) {
    if (!ConfigError.is(err)) throw err;
    process.stderr.write(`${role}: ${err.message}\n`);
    process.exit(2);
  }
  const log = createNodeLogger('info');
  let node: RunningNode | undefined;
  let stopRequested: string | undefined;
  const stop = (why: string): void => {
    if (stopRequested !== undefined) return;
    stopRequested = why;
    log.info({ why }, 'stopping');
    // Still joining: the stop runs as soon as the start settles.
    if (node !== undefined) leave(node);
  };
  const leave = (running: RunningNode): void => {
    running.stop().then(
      () => {
        log.info({}, 'stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ error: err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (config.exitWithParent) {
    process.stdin.on('end', () => stop('parent gone'));
    process.stdin.resume();
  }
  try {
    node = await startNode(config, log, createNodeLogger('warn'));
  } catch (err) {
    log.error({ error: err }, 'could not start');
    process.exit(stopRequested !== undefined ? 0 : 1);
  }
  if (stopRequested !== undefined) {
    leave(node);
    return;
  }
  log.info({ role, address: node.cluster.address }, 'ready');
}
