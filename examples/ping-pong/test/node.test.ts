import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Cluster, EtcdProvider } from '@granary/cluster';
import { typeNameOf } from '@granary/codegen/runtime';
import { freePort, startEtcd, startRedis } from '@granary/testkit';
import type { EtcdHandle, RedisHandle } from '@granary/testkit';
import { readConfig } from '../src/config';
import type { NodeRole } from '../src/config';
import {
  PingMessage,
  type PongMessage,
  PongerClient,
  PongerGrain,
} from '../src/gen/protos.granary';
import { startNode } from '../src/node';
import type { RunningNode } from '../src/node';
import { LogCapture } from './helpers/log-capture';

/** Short enough to see a passivation inside a test, long enough not to race the calls. */
const TEST_IDLE_TIMEOUT_MS = 400;
const CALL_TIMEOUT_MS = 10_000;

describe('ping-pong nodes (startNode over etcd)', function () {
  this.timeout(60_000);
  let etcd: EtcdHandle;
  let clusterName: string;
  const started: RunningNode[] = [];
  let client: Cluster;
  let pongerLog: LogCapture;

  async function node(
    role: NodeRole,
    id: string,
    log: LogCapture,
    env: Record<string, string> = {},
  ) {
    const config = readConfig(role, {
      GRANARY_PROVIDER: 'etcd',
      GRANARY_ETCD: etcd.endpoints.join(','),
      GRANARY_CLUSTER: clusterName,
      GRANARY_NODE_ID: id,
      GRANARY_PORT: String(await freePort()),
      ...env,
    });
    const running = await startNode(config, log.logger);
    started.push(running);
    return running;
  }

  let redis: RedisHandle;

  before(async () => {
    [etcd, redis] = await Promise.all([startEtcd(), startRedis()]);
    clusterName = `test-${randomBytes(4).toString('hex')}`;
    pongerLog = new LogCapture();
    await node('ponger', 'ponger-t', pongerLog, {
      GRANARY_IDLE_TIMEOUT_MS: String(TEST_IDLE_TIMEOUT_MS),
    });
    client = await Cluster.start({
      name: clusterName,
      id: 'client',
      provider: new EtcdProvider({ endpoints: etcd.endpoints }),
      remote: { host: '127.0.0.1', port: await freePort() },
    });
  });

  after(async () => {
    await client?.shutdown().catch(() => {});
    for (const n of started.reverse()) await n.stop().catch(() => {});
    await etcd?.stop();
    await redis?.stop();
  });

  it('Ponger.ping answers a pong with the same count (uint64 as decimal text)', async () => {
    const pong = await PongerClient.for(client, 'p-rpc').ping(
      { cnt: '18446744073709551615' },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    expect(pong).to.deep.equal({ cnt: '18446744073709551615' });
  });

  it('receiveDefault answers a plain PingMessage with a PongMessage to its sender', async () => {
    const reply = await client.request<PongMessage>(
      PongerGrain.kindName,
      'p-plain',
      PingMessage.create({ cnt: '42' }),
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    expect(typeNameOf(reply)).to.equal('messages.PongMessage');
    expect(String(reply.cnt)).to.equal('42');
  });

  it('passivates when idle, logging activation and deactivation with identity and activation id', async () => {
    const client1 = PongerClient.for(client, 'p-idle');
    await client1.ping({ cnt: '1' }, { timeoutMs: CALL_TIMEOUT_MS });
    const grain = /grain=messages\.Ponger\/p-idle activation=(\S+)/;
    const [activated] = await pongerLog.waitFor(new RegExp(` activated ${grain.source}`));
    const [deactivated] = await pongerLog.waitFor(
      new RegExp(`deactivated ${grain.source} reason=idle`),
    );
    const first = grain.exec(activated)?.[1];
    expect(grain.exec(deactivated)?.[1]).to.equal(first);
    await client1.ping({ cnt: '2' }, { timeoutMs: CALL_TIMEOUT_MS });
    const again = await pongerLog.waitFor(new RegExp(` activated ${grain.source}`), 2);
    const second = grain.exec(again[1])?.[1];
    expect(second).to.be.a('string').and.not.equal(first);
  });

  it('the pinger pings its ponger grain every interval, by rpc and by plain message, naming the node that answered', async () => {
    const pingerLog = new LogCapture();
    await node('pinger', 'pinger-t', pingerLog, {
      GRANARY_PING_INTERVAL_MS: '100',
      GRANARY_PONGER_ID: 'p-pinged',
    });
    // Pings 1 to 3, each answered twice (the calls overlap, so pongs may come in any order).
    for (const cnt of [1, 2, 3]) {
      for (const via of ['rpc', 'message']) {
        await pingerLog.waitFor(new RegExp(` pong cnt=${cnt} via=${via} from=ponger-t\\b`));
      }
    }
    expect(pongerLog.matching(/ activated grain=messages\.Ponger\/p-pinged /)).to.have.length(1);
  });

  it('with GRANARY_REDIS, the answered count survives passivation (written fenced on every pong)', async () => {
    // A cluster of its own, so the one ponger there (with a store) hosts every grain.
    const name = `${clusterName}-redis`;
    const log = new LogCapture();
    await node('ponger', 'ponger-r', log, {
      GRANARY_CLUSTER: name,
      GRANARY_REDIS: redis.url,
      GRANARY_IDLE_TIMEOUT_MS: String(TEST_IDLE_TIMEOUT_MS),
    });
    const pinger = await node('pinger', 'pinger-r', new LogCapture(), {
      GRANARY_CLUSTER: name,
      GRANARY_PONGER_ID: 'unused',
      GRANARY_PING_INTERVAL_MS: '3600000',
    });
    const grain = PongerClient.for(pinger.cluster, 'p-stored');
    for (let i = 1; i <= 3; i++)
      await grain.ping({ cnt: String(i) }, { timeoutMs: CALL_TIMEOUT_MS });
    await log.waitFor(/ activated grain=messages\.Ponger\/p-stored \S+ answered=0\b/);
    await log.waitFor(/deactivated grain=messages\.Ponger\/p-stored \S+ reason=idle answered=3\b/);
    await grain.ping({ cnt: '4' }, { timeoutMs: CALL_TIMEOUT_MS });
    await log.waitFor(/ activated grain=messages\.Ponger\/p-stored \S+ answered=3\b/);
  });
});
