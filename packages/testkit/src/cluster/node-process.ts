import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { track, untrack } from '../cleanup';
import { TestkitError } from '../errors';

/** How long stop() waits after SIGTERM before it sends SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** Characters of stderr kept for error messages: enough for a stack trace. */
const STDERR_TAIL = 4_000;

/** Options of NodeProcess.spawn(). */
export interface NodeProcessOptions {
  /** Path of the compiled entry script (a .js file) the child runs with `node`. */
  script: string;
  /**
   * Passed to the child as one JSON argument (`process.argv[2]`).
   * @default {}
   */
  config?: unknown;
  /**
   * Label used in error messages.
   * @default the script's file name
   */
  label?: string;
  /**
   * Extra environment variables.
   * @default {}
   */
  env?: Record<string, string>;
  /**
   * A command that runs node for us, e.g. a test host's `['ip', 'netns', 'exec', ns]`. It must
   * exec node in place (same pid), so signals reach the node itself.
   * @default [] (node is spawned directly)
   */
  exec?: readonly string[] | undefined;
}

/** One JSON line the child wrote on stdout, with the time the parent read it. */
export interface NodeLine {
  /** The parsed line. */
  data: Record<string, unknown>;
  /** Date.now() in the parent when the line was read. */
  receivedAt: number;
}

/**
 * A cluster node in a child process, for kill and pause tests: the child runs an entry script
 * that reports what it sees as JSON lines on stdout and reads JSON commands on stdin. The testkit
 * knows nothing of the cluster package (no import cycle): it spawns a script by path, records
 * the lines, and signals the process. Registered with the testkit's cleanup so a crashed runner
 * leaves no node behind.
 *
 * @example
 * const node = await NodeProcess.spawn({ script: join(__dirname, 'fixtures/etcd-node.js'), config });
 * await node.waitFor((l) => l.type === 'ready');
 * await node.kill();
 */
export class NodeProcess {
  /** Every JSON line so far, in order. */
  readonly lines: NodeLine[] = [];
  /** Resolves when the process has exited and its stdout has been read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private readonly lineListeners = new Set<(line: NodeLine) => void>();
  private stderr = '';
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(
    private readonly child: ChildProcess,
    /** Label for messages. */
    readonly label: string,
  ) {
    // 'close', not 'exit': it comes after the child's stdout has ended, so once `exited`
    // resolves (and stop() returns) every line the child wrote is in `lines` (at 'exit' the
    // last ones, e.g. the deactivations of a graceful leave, may still be in the pipe).
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        this.exitInfo = { code, signal };
        untrack(child.pid);
        this.wake();
        resolve(this.exitInfo);
      });
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(line) as Record<string, unknown>;
      } catch {
        data = { type: 'text', text: line };
      }
      const entry = { data, receivedAt: Date.now() };
      this.lines.push(entry);
      for (const listener of [...this.lineListeners]) listener(entry);
      this.wake();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
  }

  /** Spawns `node <script> '<config JSON>'`. */
  static spawn(options: NodeProcessOptions): NodeProcess {
    const [command, ...prefix] = [...(options.exec ?? []), process.execPath];
    const child = spawn(
      command,
      [...prefix, '--enable-source-maps', options.script, JSON.stringify(options.config ?? {})],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ...options.env },
      },
    );
    track(child);
    return new NodeProcess(child, options.label ?? options.script.split('/').pop() ?? 'node');
  }

  /** The child's pid. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** True once the process has exited. */
  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** How the process exited (code or signal), or undefined while it runs. */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** The last few KB of the child's stderr. */
  get stderrTail(): string {
    return this.stderr;
  }

  /**
   * Resolves with the first line at index >= `from` that matches; rejects after `timeoutMs`, or
   * if the process exits first (with its stderr in the message).
   */
  waitFor(
    match: (data: Record<string, unknown>) => boolean,
    timeoutMs = 10_000,
    from = 0,
  ): Promise<NodeLine> {
    return new Promise((resolve, reject) => {
      let checked = from;
      const check = (): void => {
        for (; checked < this.lines.length; checked++) {
          if (match(this.lines[checked].data)) {
            done();
            resolve(this.lines[checked]);
            return;
          }
        }
        if (this.exitInfo) {
          done();
          reject(
            new TestkitError(
              `${this.label} (pid ${this.pid}) exited ${JSON.stringify(this.exitInfo)} before the expected line; stderr:\n${this.stderr}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new TestkitError(
            `${this.label} (pid ${this.pid}): no matching line within ${timeoutMs} ms; stderr:\n${this.stderr}`,
          ),
        );
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Calls `listener` with every later line; the returned function unsubscribes. */
  onLine(listener: (line: NodeLine) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  /** Writes one JSON command line to the child's stdin. */
  send(command: unknown): void {
    this.child.stdin?.write(`${JSON.stringify(command)}\n`);
  }

  /** SIGKILL and wait for the exit. */
  async kill(): Promise<void> {
    await this.signalAndWait('SIGKILL');
  }

  /** SIGTERM, SIGKILL after a grace period; waits for the exit. */
  async stop(): Promise<void> {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.signalAndWait('SIGTERM');
    clearTimeout(timer);
  }

  /** SIGSTOP: the process freezes (its timers and sockets stall), like a blocked machine. */
  pause(): void {
    this.child.kill('SIGSTOP');
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.child.kill('SIGCONT');
  }

  private async signalAndWait(signal: NodeJS.Signals): Promise<void> {
    if (this.exitInfo) return;
    this.child.kill('SIGCONT');
    this.child.kill(signal);
    await this.exited;
  }

  private wake(): void {
    for (const check of [...this.waiters]) check();
  }
}
