import { connect } from 'node:net';
import { DEFAULT_ETCD_PROVIDER_OPTIONS } from '../../src/providers/etcd/etcd-provider-options';
import type { ChaosCluster } from './chaos-cluster';

/** The members' lease TTL: the default, as users run it. */
export const TTL_MS = DEFAULT_ETCD_PROVIDER_OPTIONS.ttlSeconds * 1000;
/** How long the CPU burst holds a node's event loop: a long synchronous turn. */
export const BURN_MS = 3000;

/** One scheduled fault: `run` injects it and resolves when its own action is over. */
export interface Fault {
  name: string;
  /** A reason to skip it here (e.g. not root), or undefined to run it. */
  skip?(c: ChaosCluster): string | undefined;
  run(c: ChaosCluster): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Redis saves its data set and exits (`SHUTDOWN SAVE`): a restart keeps every write. */
function shutdownSave(port: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => socket.write('SHUTDOWN SAVE\r\n'));
    socket.once('close', () => resolve());
    socket.once('error', () => resolve());
  });
}

/** The faults of issue 17, in the order the chaos test injects them. */
export const FAULTS: readonly Fault[] = [
  {
    name: 'SIGKILL node-0, restart after TTL + 1 s',
    async run(c) {
      await c.kill(0);
      await sleep(TTL_MS + 1000);
      await c.startNode(0);
    },
  },
  {
    name: 'SIGSTOP node-1 for 2 x TTL',
    async run(c) {
      c.node(1).pause();
      await sleep(2 * TTL_MS);
      c.node(1).resume();
    },
  },
  {
    name: 'SIGTERM node-2 (graceful leave), restart',
    async run(c) {
      await c.node(2).stop();
      await c.startNode(2);
    },
  },
  {
    name: 'Redis restart',
    async run(c) {
      await shutdownSave(c.redis.port);
      await c.redis.restart();
    },
  },
  {
    // Issue 25: a crash, not a clean shutdown. The testkit's Redis keeps its append-only file
    // (the default durability, 'restart', needs it), so no acknowledged op may be lost.
    name: 'Redis SIGKILL, restart after 1 s',
    async run(c) {
      await c.redis.kill({ keepData: true });
      await sleep(1000);
      await c.redis.restart();
    },
  },
  {
    name: 'etcd leader SIGKILL, restart after 3 s',
    async run(c) {
      const leader = await c.etcd.leader();
      await leader.kill();
      await sleep(3000);
      await leader.restart();
    },
  },
  {
    name: 'etcd follower SIGKILL, restart after 3 s',
    async run(c) {
      const follower = await c.etcd.follower();
      await follower.kill();
      await sleep(3000);
      await follower.restart();
    },
  },
  {
    name: `CPU burst: node-3's event loop held ${BURN_MS} ms`,
    async run(c) {
      const node = c.node(3);
      const from = node.lines.length;
      node.send({ cmd: 'burn', ms: BURN_MS });
      await node.waitFor((l) => l.type === 'burned', BURN_MS + 20_000, from);
    },
  },
  {
    name: 'network partition of node-0 (netns link down) for 3 x TTL',
    skip: (c) => c.networkSkipped,
    async run(c) {
      c.net!.partition(0);
      await sleep(3 * TTL_MS);
      c.net!.heal(0);
    },
  },
];
