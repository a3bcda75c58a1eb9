import { defineBenchmark } from '../harness';
import { startPeerAndClient } from './grains-calls';

/** etcd's minimum lease TTL: the target is TTL + 1 s = 3 s. */
const TTL_SECONDS = 2;
const GRAINS = 100;
let run = 0;

export const benchmark = defineBenchmark({
  name: 'grains-failover',
  description:
    'SIGKILL of one of 3 grain nodes (etcd, lease TTL 2 s) -> every grain it hosted answers ' +
    'again from a survivor, in ms (target <= TTL + 1 s)',
  repeats: 3,
  warmup: 0,
  cases: [
    {
      id: 'sigkill-to-all-grains-callable',
      metric: 'ms',
      run: async () => {
        const { tc, client } = await startPeerAndClient(`bench-failover-${run++}`, 3, TTL_SECONDS);
        try {
          const where = new Map<string, string>();
          for (let i = 0; i < GRAINS; i++) {
            const r = await client.request<{ member: string }>('echo', `g-${i}`, { i });
            where.set(`g-${i}`, r.member);
          }
          const victim = tc.nodes[0]!;
          const hosted = [...where].filter(([, m]) => m === victim.id).map(([id]) => id);
          const killedAt = Date.now();
          await tc.kill(victim);
          const times = await Promise.all(
            hosted.map(async (id) => {
              for (;;) {
                try {
                  const r = await client.request<{ member: string }>(
                    'echo',
                    id,
                    { id },
                    { timeoutMs: 10_000 },
                  );
                  if (r.member !== victim.id) return Date.now() - killedAt;
                } catch {
                  // retried until a survivor answers
                }
              }
            }),
          );
          return Math.max(...times);
        } finally {
          await client.shutdown({ graceful: false });
          await tc.stop();
        }
      },
    },
  ],
});
