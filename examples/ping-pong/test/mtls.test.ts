import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { freePort } from '@granary/testkit';
import { readConfig, type NodeRole } from '../src/config';
import { PongerClient } from '../src/gen/protos.granary';
import { startNode, type RunningNode } from '../src/node';
import { LogCapture } from './helpers/log-capture';
import { EXAMPLE_DIR } from './helpers/paths';

const MAKE_CERTS = join(EXAMPLE_DIR, 'scripts', 'make-certs.sh');

describe('mutual TLS with the throwaway CA of scripts/make-certs.sh', function () {
  this.timeout(60_000);
  let dir: string;
  const started: RunningNode[] = [];
  let seedAddress: string;

  async function node(
    role: NodeRole,
    id: string,
    env: Record<string, string>,
  ): Promise<RunningNode> {
    const config = readConfig(role, {
      GRANARY_PROVIDER: 'seed',
      GRANARY_CLUSTER: 'mtls',
      GRANARY_NODE_ID: id,
      GRANARY_PORT: String(await freePort()),
      ...(role === 'seed' ? {} : { GRANARY_SEED: seedAddress }),
      ...env,
    });
    const running = await startNode(config, new LogCapture().logger);
    started.push(running);
    return running;
  }
  const certsOf = (name: string): Record<string, string> => ({
    GRANARY_TLS_CA: join(dir, 'ca.crt'),
    GRANARY_TLS_CERT: join(dir, `${name}.crt`),
    GRANARY_TLS_KEY: join(dir, `${name}.key`),
  });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'granary-example-certs-'));
    execFileSync(MAKE_CERTS, [dir, 'seed', 'ponger-a', 'client'], { stdio: 'ignore' });
  });
  after(async () => {
    for (const n of started.reverse()) await n.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a seed and a ponger over mutual TLS; a node without a certificate cannot join', async () => {
    const seed = await node('seed', 'seed', certsOf('seed'));
    seedAddress = seed.cluster.address;
    await node('ponger', 'ponger-a', certsOf('ponger-a'));
    const client = await node('pinger', 'client', certsOf('client'));
    const pong = await PongerClient.for(client.cluster, 'p-tls').ping(
      { cnt: '7' },
      { timeoutMs: 10_000 },
    );
    expect(pong).to.deep.equal({ cnt: '7' });
    let error: unknown;
    try {
      await node('ponger', 'intruder', { GRANARY_SECRET: 'not-a-certificate-but-a-secret' });
    } catch (err) {
      error = err;
    }
    expect((error as Error | undefined)?.name).to.match(/JoinRefusedError|JoinTimeoutError/);
  });
});
