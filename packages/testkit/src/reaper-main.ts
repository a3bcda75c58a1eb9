/**
 * The reaper: a tiny process that outlives a test runner killed with SIGKILL. It reads
 * `track <pid> <dir>` / `untrack <pid> <dir>` lines on stdin; when stdin closes (the parent
 * exited, however it died) it SIGKILLs every tracked pid and removes every tracked dir.
 */
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';

const pids = new Set<number>();
const dirs = new Set<string>();

function reap(): void {
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone: nothing to reap
      }
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [verb, pidText, ...rest] = line.split(' ');
  const pid = Number(pidText);
  const dir = rest.join(' ');
  if (verb === 'track') {
    if (pid > 0) pids.add(pid);
    if (dir) dirs.add(dir);
  } else if (verb === 'untrack') {
    pids.delete(pid);
    if (dir) dirs.delete(dir);
  }
});
lines.on('close', reap);
process.on('SIGTERM', reap);
process.on('SIGINT', () => undefined);
