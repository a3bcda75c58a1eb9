import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './internal/free-port';

/** How long a private redis-server may take to accept connections. */
const READY_TIMEOUT_MS = 10_000;

/** A redis-server the demo started for its run (append-only file on, in a temporary folder). */
export interface PrivateRedis {
  readonly url: string;
  readonly pid: number | undefined;
  /** Stops the server and removes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` from PATH on a free loopback port, through bin/redis.cjs (which stops
 * it when the runner's pipe closes, so a killed runner leaves no server behind). Resolves
 * undefined, with the reason in `why`, when there is no redis-server or it did not start.
 */
export async function startPrivateRedis(
  exampleDir: string,
  why: (reason: string) => void,
): Promise<PrivateRedis | undefined> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'granary-demo-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
  args.push('--appendonly', 'yes', '--appendfsync', 'always'); // what durability 'restart' asks
  const child = spawn(process.execPath, [join(exampleDir, 'bin', 'redis.cjs'), ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
    detached: true, // its own process group: the terminal's Ctrl-C does not stop it before the nodes
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  const ready = await waitForPort(port, exited);
  if (!ready) {
    child.kill('SIGKILL');
    await exited;
    cleanup();
    why(stderr.trim().split('\n').pop() || 'redis-server did not start');
    return undefined;
  }
  // Stopped by stop(), or by bin/redis.cjs when this process ends: it must not keep it alive.
  child.unref();
  for (const pipe of [child.stdin, child.stderr])
    (pipe as { unref?: () => void } | null)?.unref?.();
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      // Waited for again: without the reference the runner would end before it exits.
      child.ref();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      cleanup();
    },
  };
}

/** True once `port` accepts a connection; false when `exited` settles first or on timeout. */
async function waitForPort(port: number, exited: Promise<void>): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!gone && Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
