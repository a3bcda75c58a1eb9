/** How the pinger got a pong: an rpc through the generated client, or a plain message. */
export type PongVia = 'rpc' | 'message';

/** One pong the pinger printed. */
export interface PongSeen {
  cnt: number;
  via: PongVia;
  /** Member id of the node that answered. */
  node: string;
  /** When the runner read the line (ms since epoch). */
  at: number;
}

/** The failover measurement of `--kill-after`. */
export interface FailoverReport {
  killed: string;
  killedAt: number;
  lastPongBefore: PongSeen | undefined;
  firstPongAfter: PongSeen | undefined;
  /** From the last pong before the kill to the first pong from another node after it. */
  pauseMs: number | undefined;
}

/** The event word of a node's log line (`12:00:01.234 info  pong cnt=3 ...`). */
const EVENT = /^\S+ +\w+ +(\w+)\b/;
/** `key=value` fields of a log line (values are never quoted in the lines read here). */
const FIELD = /\b(\w+)=(\S+)/g;

function fieldsOf(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of text.matchAll(FIELD)) fields[m[1]] = m[2];
  return fields;
}

/** The identity part of `kind/identity`. */
function identityOf(grain: string | undefined): string | undefined {
  const slash = grain?.lastIndexOf('/') ?? -1;
  return slash < 0 ? undefined : grain?.slice(slash + 1);
}

/**
 * Reads the nodes' log lines as the runner prints them and keeps what the demo reports: each
 * pong and who answered it, which node currently hosts each grain (from the grains' activation
 * and deactivation lines), and the pause around a deliberate kill.
 */
export class PongTracker {
  readonly pongs: PongSeen[] = [];
  private readonly hosts = new Map<string, string>();
  private killed: { node: string; at: number } | undefined;

  /**
   * Feeds one line printed by node `node`: `pong cnt=.. via=.. from=..` lines of the pinger,
   * `activated grain=kind/id` and `deactivated grain=kind/id` lines of the pongers.
   */
  observe(node: string, text: string, at: number): PongSeen | undefined {
    const event = EVENT.exec(text)?.[1];
    if (event !== 'pong' && event !== 'activated' && event !== 'deactivated') return undefined;
    const f = fieldsOf(text);
    if (event === 'pong') {
      if (f.cnt === undefined || f.from === undefined) return undefined;
      if (f.via !== 'rpc' && f.via !== 'message') return undefined;
      const seen: PongSeen = { cnt: Number(f.cnt), via: f.via, node: f.from, at };
      this.pongs.push(seen);
      return seen;
    }
    const identity = identityOf(f.grain);
    if (identity === undefined) return undefined;
    if (event === 'activated') this.hosts.set(identity, node);
    else if (this.hosts.get(identity) === node) this.hosts.delete(identity);
    return undefined;
  }

  /**
   * The node hosting grain `identity`: the last node that logged its activation and has not
   * logged its deactivation since; else the node that answered the last rpc pong.
   */
  hostOf(identity: string): string | undefined {
    const host = this.hosts.get(identity);
    if (host !== undefined) return host;
    for (let i = this.pongs.length - 1; i >= 0; i--) {
      if (this.pongs[i].via === 'rpc') return this.pongs[i].node;
    }
    return undefined;
  }

  /** Records that `node` was SIGKILLed at `at`; its grains are no longer hosted. */
  markKilled(node: string, at: number): void {
    this.killed = { node, at };
    for (const [identity, host] of this.hosts) if (host === node) this.hosts.delete(identity);
  }

  /** The first pong seen at or after `since` (ms since epoch). */
  firstPongSince(since: number): PongSeen | undefined {
    return this.pongs.find((p) => p.at >= since);
  }

  /** Distinct nodes that answered pongs. */
  answeringNodes(): string[] {
    return [...new Set(this.pongs.map((p) => p.node))];
  }

  /**
   * The failover numbers, once a kill was recorded: the first pong after the kill from another
   * node, and the pause before it, counted from the last pong seen before it (one the killed
   * node sent just before dying counts), or from the kill if there was none.
   */
  failover(): FailoverReport | undefined {
    if (this.killed === undefined) return undefined;
    const { node, at } = this.killed;
    const resumed = this.pongs.findIndex((p) => p.at > at && p.node !== node);
    const after = resumed < 0 ? undefined : this.pongs[resumed];
    // In the order read, not by time: pongs read in the same millisecond keep their order.
    const before =
      resumed < 0 ? this.pongs.filter((p) => p.at <= at).pop() : this.pongs[resumed - 1];
    return {
      killed: node,
      killedAt: at,
      lastPongBefore: before,
      firstPongAfter: after,
      pauseMs: after !== undefined ? after.at - (before?.at ?? at) : undefined,
    };
  }
}
