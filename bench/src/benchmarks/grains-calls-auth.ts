import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cluster } from '@granary/cluster';
import type { TestCluster } from '@granary/testkit';
import { defineBenchmark, percentile, type BenchCase } from '../harness';
import { inFlightWarm } from '../in-flight';
import { startPeerAndClient } from './grains-calls';

/** Calls per repetition (~1 s at 100k calls/s), as grains-calls. */
const CALLS = 100_000;
const IN_FLIGHT = 1000;
const GRAINS = 100;
/** The example's throwaway-CA script (repo root from bench/dist/benchmarks). */
const MAKE_CERTS = join(__dirname, '../../../examples/ping-pong/scripts/make-certs.sh');
const SECRET = 'grains-calls-auth-bench-secret-0123456789';

interface Pair {
  tc: TestCluster;
  client: Cluster;
}
const pairs = new Map<'plain' | 'secret' | 'mtls', Pair>();
let certDir: string;

function call(mode: 'plain' | 'secret' | 'mtls') {
  return (n: number): Promise<unknown> =>
    pairs.get(mode)!.client.request('mirror', `g-${n % GRAINS}`, { n }, { timeoutMs: 30_000 });
}

function cases(mode: 'plain' | 'secret' | 'mtls'): BenchCase[] {
  const id = `grain-calls-inflight-1000-${mode}`;
  const baseline = mode === 'plain' ? undefined : 'grain-calls-inflight-1000-plain';
  return [
    {
      id,
      metric: 'calls_per_s',
      ...(baseline === undefined ? {} : { baseline }),
      run: async () => (await inFlightWarm(CALLS, IN_FLIGHT, call(mode))).perSecond,
    },
    {
      id: `${id}-p99`,
      metric: 'p99_ms',
      ...(baseline === undefined ? {} : { baseline: `${baseline}-p99` }),
      run: async () => percentile((await inFlightWarm(CALLS, IN_FLIGHT, call(mode))).latencies, 99),
    },
  ];
}

export const benchmark = defineBenchmark({
  name: 'grains-calls-auth',
  description:
    'grain calls as grains-calls (a client member, a grain node process, 1,000 in flight) on ' +
    'three clusters started side by side: plaintext loopback, a shared secret (HMAC handshake), ' +
    'and mutual TLS; the secret and mTLS cases have plaintext as their baseline',
  repeats: 5,
  async setup() {
    certDir = mkdtempSync(join(tmpdir(), 'granary-bench-certs-'));
    execFileSync(MAKE_CERTS, [certDir, 'node'], { stdio: 'ignore' });
    const pem = (f: string): string => readFileSync(join(certDir, f), 'utf8');
    const tls = {
      ca: pem('ca.crt'),
      cert: pem('node.crt'),
      key: pem('node.key'),
      requireClientCert: true,
    };
    pairs.set('plain', await startPeerAndClient('bench-auth-plain'));
    pairs.set('secret', await startPeerAndClient('bench-auth-secret', 1, 3, { secret: SECRET }));
    pairs.set('mtls', await startPeerAndClient('bench-auth-mtls', 1, 3, { tls }));
    for (const mode of pairs.keys()) for (let i = 0; i < GRAINS; i++) await call(mode)(i);
  },
  async teardown() {
    for (const { client, tc } of pairs.values()) {
      await client.shutdown({ graceful: false });
      await tc.stop();
    }
    rmSync(certDir, { recursive: true, force: true });
  },
  cases: [...cases('plain'), ...cases('secret'), ...cases('mtls')],
});
