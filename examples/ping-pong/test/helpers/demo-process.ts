import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { isAlive } from '@granary/testkit';
import { DEMO_BIN } from './paths';

/** How long a demo may run past its own --seconds before the test gives up on it. */
const EXIT_SLACK_MS = 30_000;

/**
 * The demo runner (`bin/demo.cjs`, what `npm run demo` runs after building) as a child
 * process of the test, with its output collected line by line. `cleanup()` SIGKILLs the
 * runner and every node it reported starting, so a failing test leaves no process behind.
 */
export class DemoProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();

  constructor(args: string[]) {
    this.child = spawn(process.execPath, [DEMO_BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream === null) continue;
      createInterface({ input: stream }).on('line', (line) => {
        this.lines.push(line);
        for (const w of this.waiters) w();
      });
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Process ids of the nodes, from the runner's `started <name> (pid N)` lines. */
  nodePids(): number[] {
    return this.lines
      .map((l) => /\[demo\]\s+started \S+ \(pid (\d+)\)/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]));
  }

  /** Resolves with the first line matching `pattern` (already printed or to come). */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const line = this.lines.find((l) => pattern.test(l));
        if (line === undefined) return false;
        clearTimeout(timer);
        this.waiters.delete(onLine);
        resolve(line);
        return true;
      };
      const onLine = (): void => void check();
      const timer = setTimeout(() => {
        this.waiters.delete(onLine);
        reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${this.tail()}`));
      }, timeoutMs);
      if (!check()) this.waiters.add(onLine);
    });
  }

  /** Waits for the runner to exit on its own (bounded). */
  async waitForExit(
    runSeconds: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`demo still running ${EXIT_SLACK_MS} ms after its end:\n${this.tail()}`),
          ),
        runSeconds * 1000 + EXIT_SLACK_MS,
      );
    });
    try {
      return await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** The last lines, for failure messages. */
  tail(n = 40): string {
    return this.lines.slice(-n).join('\n');
  }

  /** SIGKILLs whatever is still alive: the runner and every node it started. */
  cleanup(): void {
    for (const pid of [this.pid, ...this.nodePids()]) {
      if (pid > 0 && isAlive(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Exited in between.
        }
      }
    }
  }
}

/** Resolves once none of `pids` is alive; rejects after `timeoutMs` naming the survivors. */
export async function waitUntilGone(pids: number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0) return;
    if (Date.now() > deadline) throw new Error(`processes still alive: ${alive.join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
