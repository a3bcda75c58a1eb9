import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { NodeRole } from '../config';

/** After SIGTERM, how long a node may take to leave the cluster before it is SIGKILLed. */
const STOP_GRACE_MS = 8_000;

/** One line a node printed, with the time the runner read it. */
export interface NodeLine {
  node: ChildNode;
  text: string;
  stream: 'stdout' | 'stderr';
  at: number;
}

/** How a node process ended. */
export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the runner needs to start one node. */
export interface ChildNodeSpec {
  /** Name printed as the line prefix and used as member id. */
  name: string;
  role: NodeRole;
  /** The node script (`examples/ping-pong/bin/<role>.cjs`). */
  script: string;
  /** Working directory (the repo root, as in the Docker image). */
  cwd: string;
  /** GRANARY_* variables of this node. */
  env: Record<string, string>;
  /** Called for every line the node prints. */
  onLine(line: NodeLine): void;
}

/**
 * A cluster node in a child process. It runs in its own process group (so a Ctrl-C in the
 * terminal reaches only the runner, which stops the nodes in order) and gets
 * GRANARY_PARENT_PIPE=1 with a stdin pipe: if the runner dies, even by SIGKILL, the pipe closes
 * and the node shuts itself down, so no node outlives the demo.
 */
export class ChildNode {
  readonly name: string;
  readonly role: NodeRole;
  readonly exited: Promise<NodeExit>;
  /** Set when the runner SIGKILLed the node on purpose (--kill-after). */
  killedOnPurpose = false;
  private readonly child: ChildProcess;
  private exit: NodeExit | undefined;

  constructor(spec: ChildNodeSpec) {
    this.name = spec.name;
    this.role = spec.role;
    this.child = spawn(process.execPath, [spec.script], {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env, GRANARY_PARENT_PIPE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
      this.child.once('error', () => {
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const source = this.child[stream];
      if (source === null) continue;
      createInterface({ input: source }).on('line', (text) =>
        spec.onLine({ node: this, text, stream, at: Date.now() }),
      );
    }
  }

  /** The OS process id (undefined if the spawn failed). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /**
   * Graceful stop: SIGTERM (the node leaves the cluster and exits), SIGKILL if it is still
   * running after STOP_GRACE_MS. Resolves with how it ended.
   */
  async stop(graceMs = STOP_GRACE_MS): Promise<NodeExit & { forced: boolean }> {
    if (this.exit !== undefined) return { ...this.exit, forced: false };
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== 'late') return { ...first, forced: false };
    this.signal('SIGKILL');
    return { ...(await this.exited), forced: true };
  }

  /** SIGKILL: the node dies without leaving the cluster (failover demo). */
  kill(): void {
    this.killedOnPurpose = true;
    this.signal('SIGKILL');
  }

  private signal(signal: NodeJS.Signals): void {
    if (this.exit !== undefined || this.child.pid === undefined) return;
    try {
      process.kill(this.child.pid, signal);
    } catch {
      // Already gone between the check and the signal: the exit event follows.
    }
  }
}
