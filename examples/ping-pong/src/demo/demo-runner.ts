import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { NodeRole } from '../config';
import { ChildNode } from './child-node';
import type { NodeLine } from './child-node';
import type { DemoOptions } from './demo-options';
import { freePort } from './internal/free-port';
import { startPrivateRedis, type PrivateRedis } from './private-redis';
import { PongTracker } from './pong-tracker';
import type { FailoverReport } from './pong-tracker';

/** How long the seed node may take to print `ready` (a cold start compiles nothing, ~1 s). */
const SEED_READY_TIMEOUT_MS = 20_000;
/** The grain the pinger calls (the Go original's `ponger-1`). */
const PONGER_ID = 'ponger-1';
/** How often --kill-after looks again for ponger-1's host when it had none yet. */
const KILL_RETRY_MS = 100;
/** Width of the `[name]` prefix, so the nodes' lines line up. */
const PREFIX_WIDTH = 8;

/** Where the runner writes (stdout in the CLI, a buffer in tests). */
export interface DemoOutput {
  line(text: string): void;
}

/** The outcome of one demo run. */
export interface DemoResult {
  /** No node failed, every node stopped without SIGKILL (except the --kill-after one), pongs flowed. */
  ok: boolean;
  pongs: number;
  /** Seconds from start to the first pong. */
  firstPongAfterS: number | undefined;
  nodes: string[];
  failover: FailoverReport | undefined;
  /** Process ids of every node started, for the caller's leak check. */
  pids: number[];
  /** Tick numbers of the digest reminder's fires, in the order the nodes printed them. */
  reminderTicks: number[];
}

/**
 * Runs the demo cluster on loopback: (with the seed provider) a seed node, two ponger nodes
 * and a pinger, each a child process whose lines are printed with a `[name]` prefix. Stops them
 * all gracefully (pinger, pongers, seed) after `seconds` or on `interrupt()`.
 */
export class DemoRunner {
  private readonly nodes: ChildNode[] = [];
  private readonly tracker = new PongTracker();
  private readonly startedAt = Date.now();
  private stopping: Promise<void> | undefined;
  private failed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private wakeUp: () => void = () => {};
  /** Set once the run is over (timer, interrupt, failure): no more nodes are started. */
  private ending = false;
  private readonly lineWaiters = new Set<(line: NodeLine) => void>();
  private redis: PrivateRedis | undefined;
  /** Digest reminder fires seen, and the digest grain's activations and passivations. */
  private readonly reminders = { ticks: [] as number[], activated: 0, passivated: 0 };

  constructor(
    private readonly options: DemoOptions,
    private readonly out: DemoOutput,
    /** The example's folder (holds bin/); nodes run with the repo root as cwd. */
    private readonly exampleDir: string,
  ) {}

  /** Starts the cluster, waits for the end (timer, interrupt or failure), stops it. */
  async run(): Promise<DemoResult> {
    const o = this.options;
    this.say(
      `starting ${o.provider === 'seed' ? 'a seed node, ' : ''}two ponger nodes and a pinger ` +
        `(provider ${o.provider}${o.provider === 'etcd' ? ` at ${o.etcd.join(',')}` : ''}) ` +
        `for ${o.seconds} s; Ctrl-C stops earlier`,
    );
    const finished = new Promise<void>((resolve) => {
      this.wakeUp = () => {
        this.ending = true;
        resolve();
      };
    });
    this.timers.push(setTimeout(() => this.wakeUp(), o.seconds * 1000));
    try {
      await this.startNodes();
      if (o.killAfter !== undefined) {
        const delay = Math.max(0, this.startedAt + o.killAfter * 1000 - Date.now());
        this.timers.push(setTimeout(() => this.killPongerHost(), delay));
      }
    } catch (err) {
      this.fail(`could not start the cluster: ${(err as Error).message}`);
    }
    await finished;
    await this.stopAll();
    return this.report();
  }

  /** Ctrl-C: stop now (a second call forces: SIGKILL every node). */
  interrupt(): void {
    if (this.stopping !== undefined) {
      this.say('second interrupt: killing every node');
      for (const node of this.nodes) node.kill();
      return;
    }
    this.say('interrupted: stopping the nodes');
    this.wakeUp();
  }

  private async startNodes(): Promise<void> {
    const cluster = `demo-${process.pid}`;
    const base: Record<string, string> = {
      GRANARY_CLUSTER: cluster,
      GRANARY_HOST: '127.0.0.1',
      GRANARY_PROVIDER: this.options.provider,
      GRANARY_PONGER_ID: PONGER_ID,
      // A fresh shared secret per run: the nodes authenticate each other as in production.
      GRANARY_SECRET: randomBytes(24).toString('base64url'),
    };
    if (this.options.provider === 'etcd') base.GRANARY_ETCD = this.options.etcd.join(',');
    const redis = await this.redisUrl();
    if (this.ending) return;
    if (redis !== undefined) base.GRANARY_REDIS = redis;
    if (this.options.provider === 'seed') {
      const seedPort = await freePort();
      if (this.ending) return;
      base.GRANARY_SEED = `127.0.0.1:${seedPort}`;
      const seed = this.spawn('seed', 'seed', { ...base, GRANARY_PORT: String(seedPort) });
      await this.waitForLine(seed, /\bready\b/, SEED_READY_TIMEOUT_MS);
      if (this.ending) return;
    }
    for (const [name, role] of [
      ['ponger-a', 'ponger'],
      ['ponger-b', 'ponger'],
      ['pinger', 'pinger'],
    ] as const) {
      // Port 0: each node binds a port the OS picks and announces it through membership. A
      // port picked here and bound later by the node could be taken in between (seen in CI:
      // the pinger was handed the port ponger-a had just bound).
      this.spawn(name, role, { ...base, GRANARY_PORT: '0' });
    }
  }

  /** The Redis of the ponger nodes (--redis), starting a private one for `auto`. */
  private async redisUrl(): Promise<string | undefined> {
    const r = this.options.redis;
    if (r === 'off') return undefined;
    if (r !== 'auto') {
      this.say(`ponger nodes use Redis at ${r} (grain state, durable reminders)`);
      return r;
    }
    this.redis = await startPrivateRedis(this.exampleDir, (why) =>
      this.say(`no Redis for this run (${why}): reminders are off; give --redis <url>`),
    );
    if (this.redis === undefined) return undefined;
    this.say(
      `started redis-server at ${this.redis.url} (pid ${this.redis.pid ?? '?'}) for the grain ` +
        `state and the durable reminders of digest/${PONGER_ID}; --redis off runs without`,
    );
    return this.redis.url;
  }

  private spawn(name: string, role: NodeRole, env: Record<string, string>): ChildNode {
    const node = new ChildNode({
      name,
      role,
      script: join(this.exampleDir, 'bin', `${role}.cjs`),
      cwd: join(this.exampleDir, '..', '..'),
      env: { ...env, GRANARY_NODE_ID: name },
      onLine: (line) => this.onLine(line),
    });
    this.nodes.push(node);
    this.say(`started ${name} (pid ${node.pid ?? '?'})`);
    void node.exited.then((exit) => {
      if (this.stopping !== undefined || node.killedOnPurpose) return;
      this.fail(`${name} exited unexpectedly (code ${exit.code}, signal ${exit.signal})`);
    });
    return node;
  }

  private onLine(line: NodeLine): void {
    this.out.line(`${`[${line.node.name}]`.padEnd(PREFIX_WIDTH + 2)} ${line.text}`);
    for (const waiter of this.lineWaiters) waiter(line);
    this.observeReminder(line.text);
    const pong = this.tracker.observe(line.node.name, line.text, line.at);
    if (pong !== undefined && this.tracker.pongs.length === 1) {
      this.say(`first pong ${this.elapsed(pong.at)} after start, answered by ${pong.node}`);
    }
    const failover = this.tracker.failover();
    if (pong !== undefined && failover?.firstPongAfter === pong && failover.pauseMs !== undefined) {
      this.say(
        `pongs resumed from ${pong.node}: paused ${(failover.pauseMs / 1000).toFixed(2)} s ` +
          `(since ${failover.lastPongBefore !== undefined ? `the last pong, from ${failover.lastPongBefore.node}` : 'the kill'})`,
      );
    }
  }

  /** The digest grain's lines: reminder fires, and its activations and passivations. */
  private observeReminder(text: string): void {
    const r = this.reminders;
    const fire = /\breminder fired\b.*\btick=(\d+)/.exec(text);
    if (fire !== null) {
      r.ticks.push(Number(fire[1]));
      if (r.ticks.length === 1)
        this.say('first reminder fire: it woke the passivated digest grain');
    } else if (/\bdigest activated\b/.test(text)) r.activated++;
    else if (/\bdigest passivated\b/.test(text)) r.passivated++;
  }

  private killPongerHost(retry = false): void {
    if (this.stopping !== undefined) return;
    const host = this.tracker.hostOf(PONGER_ID);
    const node = this.nodes.find((n) => n.name === host && n.role === 'ponger' && n.running);
    // Kill only once the host has answered: the pause is then measured between real pongs.
    if (node === undefined || !this.tracker.pongs.some((p) => p.node === host)) {
      if (!retry) {
        this.say(
          `--kill-after: waiting for ${PONGER_ID}'s host to answer a pong before killing it`,
        );
      }
      this.timers.push(setTimeout(() => this.killPongerHost(true), KILL_RETRY_MS));
      return;
    }
    const at = Date.now();
    node.kill();
    this.tracker.markKilled(node.name, at);
    this.say(`SIGKILLed ${node.name} (pid ${node.pid}), which hosted ${PONGER_ID}`);
  }

  private waitForLine(node: ChildNode, pattern: RegExp, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const settle = (err?: Error): void => {
        clearTimeout(timer);
        this.lineWaiters.delete(waiter);
        if (err === undefined) resolve();
        else reject(err);
      };
      const waiter = (line: NodeLine): void => {
        if (line.node === node && pattern.test(line.text)) settle();
      };
      const timer = setTimeout(
        () => settle(new Error(`${node.name} did not print ${pattern} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.lineWaiters.add(waiter);
      void node.exited.then(() => settle(new Error(`${node.name} exited before it was ready`)));
    });
  }

  private fail(reason: string): void {
    this.failed = true;
    this.say(reason);
    this.wakeUp();
  }

  private stopAll(): Promise<void> {
    this.stopping ??= (async () => {
      for (const t of this.timers) clearTimeout(t);
      // Callers first, then the grain hosts (they hand their grains over), the seed last.
      for (const roles of [['pinger'], ['ponger'], ['seed']]) {
        const group = this.nodes.filter((n) => roles.includes(n.role));
        const exits = await Promise.all(group.map((n) => n.stop()));
        exits.forEach((exit, i) => {
          const node = group[i];
          if (node.killedOnPurpose) return;
          if (exit.forced) this.fail(`${node.name} did not stop in time and was SIGKILLed`);
          else if (exit.code !== 0)
            this.fail(`${node.name} exited with code ${exit.code ?? exit.signal}`);
        });
      }
      this.say(`all ${this.nodes.length} nodes stopped`);
      await this.redis?.stop();
    })();
    return this.stopping;
  }

  private report(): DemoResult {
    const pongs = this.tracker.pongs;
    const failover = this.tracker.failover();
    const nodes = this.tracker.answeringNodes();
    const first = pongs[0];
    this.say(
      `${pongs.length} pongs (${pongs.filter((p) => p.via === 'rpc').length} rpc, ` +
        `${pongs.filter((p) => p.via === 'message').length} plain message) answered by ` +
        `${nodes.join(', ') || 'nobody'}` +
        (first !== undefined ? `; first pong ${this.elapsed(first.at)} after start` : ''),
    );
    if (failover !== undefined) {
      this.say(
        failover.pauseMs !== undefined
          ? `failover: ${failover.killed} killed at ${this.elapsed(failover.killedAt)}, pongs ` +
              `paused ${(failover.pauseMs / 1000).toFixed(2)} s, resumed from ${failover.firstPongAfter?.node}`
          : `failover: ${failover.killed} killed at ${this.elapsed(failover.killedAt)}, pongs did not resume before the end`,
      );
    }
    const r = this.reminders;
    if (r.ticks.length > 0) {
      this.say(
        `${r.ticks.length} reminder fires of digest/${PONGER_ID} (ticks ${r.ticks.join(', ')}); ` +
          `the grain was activated ${r.activated} times and passivated ${r.passivated} times ` +
          'between them',
      );
    }
    const ok = !this.failed && pongs.length > 0;
    if (pongs.length === 0) this.say('demo failed: no pong was answered');
    return {
      ok,
      pongs: pongs.length,
      firstPongAfterS: first !== undefined ? (first.at - this.startedAt) / 1000 : undefined,
      nodes,
      failover,
      pids: this.nodes.map((n) => n.pid).filter((p): p is number => p !== undefined),
      reminderTicks: [...r.ticks],
    };
  }

  private elapsed(at: number): string {
    return `${((at - this.startedAt) / 1000).toFixed(1)} s`;
  }

  private say(text: string): void {
    this.out.line(`${'[demo]'.padEnd(PREFIX_WIDTH + 2)} ${text}`);
  }
}
