import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Everything the testkit started and must not outlive the test process. Three layers make sure
 * of it: the fixture's own stop(), this process's exit/signal handlers, and the reaper child for
 * the one case the handlers cannot see (the runner itself killed with SIGKILL).
 */
const livePids = new Map<number, string | undefined>();
let reaper: ChildProcess | undefined;
let hooksInstalled = false;

function reaperChannel(): ChildProcess | undefined {
  if (process.env.GRANARY_NO_REAPER === '1') return undefined;
  if (!reaper) {
    reaper = spawn(process.execPath, [join(__dirname, 'reaper-main.js')], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    reaper.unref();
    // The pipe must not keep the test process alive; its EOF is the reaper's signal.
    (reaper.stdin as unknown as { unref?: () => void })?.unref?.();
    reaper.on('error', () => (reaper = undefined));
  }
  return reaper;
}

function killAllNow(): void {
  for (const [pid, dir] of livePids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already exited
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  livePids.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAllNow();
      process.kill(process.pid, signal);
    });
  }
}

/** Registers a child process (and its temp dir) to be killed and removed if the test process ends. */
export function track(child: ChildProcess, dir?: string): void {
  if (child.pid === undefined) return;
  installHooks();
  livePids.set(child.pid, dir);
  reaperChannel()?.stdin?.write(`track ${child.pid} ${dir ?? ''}\n`);
}

/** Forgets a child that has exited and whose dir was removed. */
export function untrack(pid: number | undefined, dir?: string): void {
  if (pid === undefined) return;
  livePids.delete(pid);
  reaperChannel()?.stdin?.write(`untrack ${pid} ${dir ?? ''}\n`);
}

/** Pids the testkit still considers running, for tests that check nothing leaked. */
export function trackedPids(): number[] {
  return [...livePids.keys()];
}

/** True if a process with this pid exists (signal 0 probes without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
