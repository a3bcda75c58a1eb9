import { expect } from 'chai';
import { freePort } from '@granary/testkit';
import { spawnNode, viewsAgree, waitForViews, type NodeView } from './node-views';

const KIND = 'K';
const SHARDS = 64;
/** The seed's lease TTL (its default). */
const TTL_MS = 3000;

describe('Cluster on SeedProvider, nodes as processes (acceptance)', function () {
  this.timeout(60_000);
  let views: NodeView[] = [];
  let seedAddress = '';

  afterEach(async () => {
    await Promise.all(views.map((v) => v.node.kill()));
    views = [];
  });

  async function spawn(id: string): Promise<NodeView> {
    const isSeed = id === 'seed';
    const port = isSeed ? await freePort() : 0;
    if (isSeed) seedAddress = `127.0.0.1:${port}`;
    const v = await spawnNode({
      provider: 'seed',
      seed: isSeed ? undefined : seedAddress,
      isSeed,
      port,
      ttlMs: TTL_MS,
      cluster: 'dev',
      id,
      kind: KIND,
      shardCount: SHARDS,
    });
    views.push(v);
    return v;
  }

  it('members join the seed and agree on members and shard owners', async () => {
    const seed = await spawn('seed');
    const others = await Promise.all([spawn('a'), spawn('b')]);
    const all = [seed, ...others];
    await waitForViews(all, () => viewsAgree(all, KIND, SHARDS, 3), 'three agree');
    expect(seed.topology.members.map((m) => m.id)).to.deep.equal(['a', 'b', 'seed']);
  });

  it('a joining member takes a share of the shards; the others keep owner and epoch', async () => {
    const seed = await spawn('seed');
    const a = await spawn('a');
    const two = [seed, a];
    await waitForViews(two, () => viewsAgree(two, KIND, SHARDS, 2), 'two agree');
    const before = new Map([
      ...two.flatMap((v) => [...v.held].map(([s, e]) => [s, `${v.id}@${e}`] as const)),
    ]);
    const b = await spawn('b');
    const three = [seed, a, b];
    await waitForViews(three, () => viewsAgree(three, KIND, SHARDS, 3), 'three agree');
    let moved = 0;
    for (const v of [seed, a]) {
      for (const [s, e] of v.held) expect(before.get(s)).to.equal(`${v.id}@${e}`);
    }
    for (const s of b.held.keys()) {
      moved++;
      expect(b.acquiredCount.get(s)).to.equal(1);
    }
    expect(moved / SHARDS).to.be.within((1 / 3) * 0.75, (1 / 3) * 1.25);
  });

  it('a graceful leave hands its shards to the others', async () => {
    const seed = await spawn('seed');
    const others = await Promise.all([spawn('a'), spawn('b')]);
    const all = [seed, ...others];
    await waitForViews(all, () => viewsAgree(all, KIND, SHARDS, 3), 'three agree');
    const leaving = others[1];
    leaving.node.send({ cmd: 'shutdown', graceful: true });
    await leaving.node.waitFor((d) => d.type === 'stopped');
    const rest = [seed, others[0]];
    await waitForViews(rest, () => viewsAgree(rest, KIND, SHARDS, 2), 'two hold every shard');
  });

  it('SIGKILL of a non-seed member: removed after the TTL, survivors hold its shards', async () => {
    const seed = await spawn('seed');
    const others = await Promise.all([spawn('a'), spawn('b')]);
    const all = [seed, ...others];
    await waitForViews(all, () => viewsAgree(all, KIND, SHARDS, 3), 'three agree');
    const victim = others[1];
    const shards = [...victim.held.keys()];
    const killedAt = Date.now();
    await victim.node.kill();
    views = views.filter((v) => v !== victim);
    const rest = [seed, others[0]];
    const goneAt = await waitForViews(
      rest,
      () => rest.every((v) => !v.topology.members.some((m) => m.id === 'b')),
      'b removed',
    );
    expect(goneAt - killedAt).to.be.at.most(TTL_MS + 1000);
    await waitForViews(rest, () => viewsAgree(rest, KIND, SHARDS, 2), 'survivors hold every shard');
    for (const s of shards) expect(rest.some((v) => v.held.has(s))).to.equal(true);
  });
});
