/**
 * A member process of the membership-scale benchmark: hosts one or more members (one
 * EtcdProvider and Cluster each, through the public API) and reports on stdout, as JSON lines:
 * `ready` per member; `settled` whenever the process's members all hold exactly the ranges they
 * are the desired owners of (or stop doing so); `state` (the shards each member holds, with
 * epochs) and `turn` (the longest event-loop turn since the last `turn-reset`) on request.
 * Commands on stdin, one JSON per line: state, turn-reset, turn-read, leave.
 *
 * argv[2]: JSON ScaleNodeConfig.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Cluster, EtcdProvider } from '@granary/cluster';
import { createStderrLogger, type LogLevel } from '@granary/core';

/** What the parent tells a member process. */
export interface ScaleNodeConfig {
  endpoints: string[];
  cluster: string;
  ids: string[];
  kinds: string[];
  shardCount?: number | undefined;
  claimRanges?: number | undefined;
  historyRetentionMs?: number | undefined;
}

/** How often a process re-checks whether its members are settled (only after events). */
const SETTLE_CHECK_MS = 200;

const config = JSON.parse(process.argv[2] ?? '{}') as ScaleNodeConfig;
const out = (line: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ ...line, at: Date.now() })}\n`);
};

/** Shards checked per turn: the check must not be the longest turn the benchmark reports. */
const CHECK_CHUNK = 2048;

/**
 * Shards of a member that it serves but should not (extra) or should serve but does not,
 * checked in turns of CHECK_CHUNK shards (a process of 16 members of 4 kinds has 1M to check).
 */
async function mismatch(c: Cluster): Promise<{ missing: number; extra: number }> {
  let missing = 0;
  let extra = 0;
  for (const kind of config.kinds) {
    const n = c.shardCountOf(kind);
    for (let s = 0; s < n; s++) {
      if (s % CHECK_CHUNK === CHECK_CHUNK - 1) await new Promise((r) => setImmediate(r));
      const serves = c.canServe(kind, s);
      if (serves !== (c.ownerOf(kind, s)?.id === c.id)) {
        if (serves) extra++;
        else missing++;
      }
    }
  }
  return { missing, extra };
}

/**
 * SCALE_LOG_DIR=<dir> (with SCALE_LOG_LEVEL, default info) writes each process's log to
 * <dir>/<first member id>.log, to find out why a run did not settle.
 */
function logger(id: string): ReturnType<typeof createStderrLogger> | undefined {
  const dir = process.env.SCALE_LOG_DIR;
  if (!dir) return undefined;
  return createStderrLogger((process.env.SCALE_LOG_LEVEL as LogLevel) ?? 'info', { member: id });
}

async function main(): Promise<void> {
  if (process.env.SCALE_LOG_DIR) {
    const file = createWriteStream(join(process.env.SCALE_LOG_DIR, `${config.ids[0]}.log`));
    process.stderr.write = file.write.bind(file) as typeof process.stderr.write;
    const started = Date.now() - Math.round(process.uptime() * 1000);
    process.stderr.write(
      `${JSON.stringify({ level: 'info', time: started, member: config.ids[0], msg: 'process start' })}\n`,
    );
  }
  const turns = monitorEventLoopDelay({ resolution: 5 });
  turns.enable();
  const clusters = await Promise.all(
    config.ids.map(async (id) => {
      const c = await Cluster.start({
        name: config.cluster,
        id,
        provider: new EtcdProvider({
          endpoints: config.endpoints,
          ...(config.historyRetentionMs === undefined
            ? {}
            : { historyRetentionMs: config.historyRetentionMs }),
        }),
        kinds: config.kinds.map((name) => ({ name, shardCount: config.shardCount })),
        ...(logger(id) ? { logger: logger(id) } : {}),
        ...(config.claimRanges === undefined ? {} : { claimRanges: config.claimRanges }),
      });
      out({ type: 'ready', id });
      if (process.env.SCALE_LOG_DIR) {
        process.stderr.write(
          `${JSON.stringify({ level: 'info', time: Date.now(), member: id, msg: 'ready' })}\n`,
        );
      }
      return c;
    }),
  );
  let dirty = true;
  for (const c of clusters) {
    for (const e of ['topology', 'shard-acquired', 'shard-released', 'lease-lost'] as const) {
      c.on(e, () => (dirty = true));
    }
  }
  let checking = false;
  const checker = setInterval(() => {
    if (!dirty || checking) return;
    dirty = false;
    checking = true;
    void (async () => {
      const off: Array<{ missing: number; extra: number }> = [];
      for (const c of clusters) off.push(await mismatch(c));
      checking = false;
      // Something changed while the check ran across turns: its answer may be torn; the next
      // check (dirty again) gives the answer.
      if (dirty) return;
      const now = off.every((m) => m.missing === 0 && m.extra === 0);
      const version = clusters[0]!.topology.version;
      const members = clusters[0]!.topology.members.length;
      const missing = off.reduce((a, m) => a + m.missing, 0);
      const extra = off.reduce((a, m) => a + m.extra, 0);
      out({ type: 'settled', settled: now, version, members, missing, extra });
    })();
  }, SETTLE_CHECK_MS);
  createInterface({ input: process.stdin }).on('line', (line) => {
    const cmd = (JSON.parse(line) as { cmd: string }).cmd;
    if (cmd === 'state') {
      for (const c of clusters) {
        const held: Record<string, Array<[number, number]>> = {};
        for (const kind of config.kinds) {
          held[kind] = c.heldShards(kind).map((s) => [s, c.epochOf(kind, s) ?? 0]);
        }
        out({ type: 'state', id: c.id, version: c.topology.version, held });
      }
      out({ type: 'state-end' });
    } else if (cmd === 'turn-reset') {
      turns.reset();
    } else if (cmd === 'turn-read') {
      out({ type: 'turn', maxMs: turns.max / 1e6 });
    } else if (cmd === 'leave') {
      clearInterval(checker);
      void Promise.all(clusters.map((c) => c.shutdown({ graceful: true }))).finally(() =>
        process.exit(0),
      );
    }
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`scale-node failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
