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
import { createInterface } from 'node:readline';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Cluster, EtcdProvider } from '@granary/cluster';

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

function settled(c: Cluster): boolean {
  for (const kind of config.kinds) {
    const n = c.shardCountOf(kind);
    for (let s = 0; s < n; s++) {
      if (c.canServe(kind, s) !== (c.ownerOf(kind, s)?.id === c.id)) return false;
    }
  }
  return true;
}

async function main(): Promise<void> {
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
        ...(config.claimRanges === undefined ? {} : { claimRanges: config.claimRanges }),
      });
      out({ type: 'ready', id });
      return c;
    }),
  );
  let dirty = true;
  let last: boolean | undefined;
  for (const c of clusters) {
    for (const e of ['topology', 'shard-acquired', 'shard-released', 'lease-lost'] as const) {
      c.on(e, () => (dirty = true));
    }
  }
  const checker = setInterval(() => {
    if (!dirty) return;
    dirty = false;
    const now = clusters.every(settled);
    const version = clusters[0]!.topology.version;
    if (now !== last || now) out({ type: 'settled', settled: now, version });
    last = now;
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
