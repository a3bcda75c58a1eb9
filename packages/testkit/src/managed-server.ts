import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { track, untrack } from './cleanup';
import { BinaryMissingError, ServerStartError } from './errors';

/** How long a server may take to answer after spawn before start fails. */
const READY_TIMEOUT_MS = 15_000;
/** Poll interval while waiting for readiness: short, the servers start in ~100 ms. */
const READY_POLL_MS = 25;
/** How long SIGTERM may take before stop() escalates to SIGKILL. */
const STOP_GRACE_MS = 5_000;

/** What a server fixture needs to know to run one binary. */
export interface ServerSpec {
  binary: string;
  debianPackage: string;
  /** Command-line arguments, given the data dir. */
  args(dataDir: string): string[];
  /** Writes what the server needs in its data dir before each start (a config file). */
  prepare?(dataDir: string): void;
  /** Resolves true once the server answers. */
  probe(): Promise<boolean>;
  label: string;
}

/** Options of stop() and kill(). */
export interface StopOptions {
  /**
   * Keep the data dir so restart() finds the same data.
   * @default false
   */
  keepData?: boolean;
}

/**
 * One server process with a temp data dir: start, wait until it answers, stop, kill, pause,
 * resume, restart on the same ports. Registered with the cleanup layers while it runs.
 */
export class ManagedServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private dataDir: string | undefined;
  private output = '';

  constructor(private readonly spec: ServerSpec) {}

  /** Pid of the running process, or undefined when stopped. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The temp data dir, while it exists. */
  get dir(): string | undefined {
    return this.dataDir;
  }

  /** Spawns the server and resolves once it answers its probe. */
  async start(): Promise<void> {
    try {
      accessSync(this.spec.binary, constants.X_OK);
    } catch {
      throw new BinaryMissingError(this.spec.binary, this.spec.debianPackage);
    }
    this.dataDir ??= mkdtempSync(join(tmpdir(), `granary-${this.spec.label}-`));
    this.output = '';
    this.spec.prepare?.(this.dataDir);
    const child = spawn(this.spec.binary, this.spec.args(this.dataDir), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keepTail = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-4000);
    };
    child.stdout?.on('data', keepTail);
    child.stderr?.on('data', keepTail);
    let exitedEarly = false;
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        exitedEarly = true;
        resolve();
      });
      child.once('error', () => resolve());
    });
    track(child, this.dataDir);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (exitedEarly) break;
      if (await this.spec.probe().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, READY_POLL_MS));
    }
    const why = exitedEarly ? 'exited while starting' : `did not answer in ${READY_TIMEOUT_MS} ms`;
    await this.kill();
    throw new ServerStartError(`${this.spec.label} ${why}; last output:\n${this.output}`);
  }

  /** SIGTERM, then SIGKILL after a grace period; removes the data dir unless kept. */
  async stop(options: StopOptions = {}): Promise<void> {
    await this.end('SIGTERM', options);
  }

  /** SIGKILL at once (a crash); removes the data dir unless kept. */
  async kill(options: StopOptions = {}): Promise<void> {
    await this.end('SIGKILL', options);
  }

  /** SIGSTOP: the process stays but answers nothing, like a frozen machine. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Starts again on the same ports (and data, if the last stop kept it). */
  async restart(): Promise<void> {
    if (this.child) await this.stop({ keepData: true });
    await this.start();
  }

  private async end(signal: NodeJS.Signals, options: StopOptions): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    this.child = undefined;
    untrack(child?.pid, options.keepData ? undefined : this.dataDir);
    if (!options.keepData && this.dataDir) {
      rmSync(this.dataDir, { recursive: true, force: true });
      this.dataDir = undefined;
    }
  }
}
