import { expect } from 'chai';
import { freePort, type TestCluster } from '@granary/testkit';
import { adminUrlOf, api, startAdminCluster, TOKEN } from './fixtures/admin-cluster';
import { granary } from './fixtures/granary-cli';

const KIND = 'admintest.Counter';
/** Grains r0..r19 get a reminder 'hourly' and a job 'once' each (the node's 'remind' command). */
const GRAINS = 20;

interface Listed {
  identity: string;
  name: string;
  member: string;
  shard: number;
  periodMs: number;
  nextDueAt: number;
}

describe('granary reminders against a running cluster', function () {
  this.timeout(180_000);
  let tc: TestCluster;
  let env: Record<string, string>;
  let url0: string;
  /** The owner of each grain r<i>'s shard. */
  const owners = new Map<string, string>();
  const run = (args: string[], extra: Record<string, string> = {}) =>
    granary(args, { ...env, ...extra });
  /** `reminders list <kind>` as JSON, through node-0. */
  const listKind = async (limit?: number) => {
    const r = await run([
      'reminders',
      'list',
      KIND,
      '--json',
      ...(limit ? ['--limit', `${limit}`] : []),
    ]);
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout) as {
      shardCount: number;
      shardsListed: number;
      total: number;
      truncated: boolean;
      reminders: Listed[];
      membersWithoutReminders: string[];
    };
  };
  /** The reminders loaded by members with reminders: two per grain whose owner is not node-2. */
  const expectedLoaded = () => [...owners.values()].filter((o) => o !== 'node-2').length * 2;

  before(async () => {
    // node-2 runs without a reminder store: the reminders of its shards are loaded by nobody.
    tc = await startAdminCluster(3, 6, { noReminders: [2] });
    url0 = await adminUrlOf(tc.nodes[0]!);
    env = { GRANARY_ADMIN_URL: url0, GRANARY_ADMIN_TOKEN: TOKEN };
    // Shards settle on their desired owners after the members joined: wait, so that the owners
    // located below are the ones that load the reminders.
    const settled = Date.now() + 30_000;
    for (;;) {
      const s = (await api(url0, `/v1/shards?kind=${KIND}`)).body.kinds[0];
      if (s.held === 16 && s.moving === 0) break;
      if (Date.now() > settled) throw new Error(`shards not settled: ${JSON.stringify(s)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const node = tc.nodes[0]!.process!;
    const from = node.lines.length;
    node.send({ cmd: 'remind', grains: GRAINS });
    const done = await node.waitFor(
      (d) => d.type === 'remind-done' || d.type === 'remind-failed',
      30_000,
      from,
    );
    expect(done.data.type, String(done.data.error)).to.equal('remind-done');
    for (let i = 0; i < GRAINS; i++) {
      const l = await api(url0, `/v1/locate?kind=${KIND}&id=r${i}`);
      owners.set(`r${i}`, l.body.owner.id as string);
    }
    // Owners load a change as they are told of it: wait until every one is loaded.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await api(url0, `/v1/reminders/list?kind=${KIND}`);
      if (r.body.total === expectedLoaded()) break;
      if (Date.now() > deadline) throw new Error(`loaded ${r.body.total} of ${expectedLoaded()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(async () => {
    await tc?.stop();
  });

  it('list <kind> <id>: the grain stored reminders, as a table and --json', async () => {
    const t = await run(['reminders', 'list', KIND, 'r1']);
    expect(t.code, t.stderr).to.equal(0);
    const lines = t.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^NAME\s+PERIOD\s+FIRST DUE\s+CATCH-UP\s+LAST TICK$/);
    expect(lines[1]).to.match(/^hourly\s+1h 0m\s+\d{4}-\d\d-\d\dT\S+Z\s+skip\s+-1$/);
    expect(lines[2]).to.match(/^once\s+job\s+\S+Z\s+-\s+-1$/);
    const j = await run(['reminders', 'list', KIND, 'r1', '--json']);
    const body = JSON.parse(j.stdout);
    expect(body.reminders.map((r: { name: string }) => r.name).sort()).to.deep.equal([
      'hourly',
      'once',
    ]);
    expect(body.reminders.find((r: { name: string }) => r.name === 'hourly').periodMs).to.equal(
      3_600_000,
    );
    const none = await run(['reminders', 'list', KIND, 'nobody']);
    expect(none.code, none.stderr).to.equal(0);
    expect(none.stdout).to.contain(`${KIND}/nobody has no reminders`);
  });

  it('list <kind>: what the owners loaded, by grain then name, and from how many shards', async () => {
    const shards = JSON.parse((await run(['shards', '--kind', KIND, '--json'])).stdout);
    const heldBy2 = shards.kinds[0].shards.filter((s: { owner: string }) => s.owner === 'node-2');
    const body = await listKind();
    expect(body.shardCount).to.equal(16);
    expect(body.shardsListed).to.equal(16 - heldBy2.length);
    expect(body.membersWithoutReminders).to.deep.equal(['node-2']);
    expect(body.total).to.equal(expectedLoaded());
    expect(body.truncated).to.equal(false);
    const keys = body.reminders.map((r) => `${r.identity} ${r.name}`);
    expect(keys).to.deep.equal([...keys].sort());
    for (const r of body.reminders) expect(r.member, r.identity).to.equal(owners.get(r.identity));
    const hourly = body.reminders.find((r) => r.name === 'hourly')!;
    expect(hourly.periodMs).to.equal(3_600_000);
    expect(hourly.nextDueAt).to.be.within(Date.now() + 400_000, Date.now() + 600_000);
    const t = await run(['reminders', 'list', KIND]);
    expect(t.code, t.stderr).to.equal(0);
    expect(t.stdout).to.match(/^GRAIN\s+NAME\s+PERIOD\s+NEXT DUE\s+LAST TICK\s+SHARD\s+MEMBER$/m);
    expect(t.stdout).to.contain(
      `${body.total} reminders and jobs, from ${body.shardsListed}/16 shards`,
    );
    const limited = await listKind(3);
    expect(limited.truncated).to.equal(true);
    expect(limited.reminders.map((r) => `${r.identity} ${r.name}`)).to.deep.equal(keys.slice(0, 3));
  });

  it('list <kind>: page by page with --after, the same reminders as one list', async () => {
    const whole = (await listKind()).reminders.map((r) => `${r.identity} ${r.name}`);
    const paged: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const args = ['reminders', 'list', KIND, '--limit', '7', '--json'];
      const r = await run(after === null ? args : [...args, '--after', after]);
      expect(r.code, r.stderr).to.equal(0);
      const page = JSON.parse(r.stdout) as { reminders: Listed[]; next: string | null };
      expect(page.reminders.length).to.be.at.most(7);
      paged.push(...page.reminders.map((x) => `${x.identity} ${x.name}`));
      after = page.next;
      if (after === null) break;
    }
    expect(after, 'the last page has no next').to.equal(null);
    expect(paged).to.deep.equal(whole);
    const t = await run(['reminders', 'list', KIND, '--limit', '7']);
    expect(t.stdout).to.match(
      new RegExp(`^more: granary reminders list ${KIND} --limit 7 --after \\S+$`, 'm'),
    );
    const bad = await run(['reminders', 'list', KIND, '--after', 'not-a-cursor']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('after must be a `next` cursor');
  });

  it('remove <kind> <id> <name>: unregisters one; removing it again exits 5', async () => {
    const [grain] = [...owners].find(([g, o]) => o !== 'node-2' && g !== 'r1')!;
    const before = (await listKind()).total;
    const r = await run(['reminders', 'remove', KIND, grain, 'hourly']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain(`removed 'hourly' of ${KIND}/${grain}`);
    const left = JSON.parse((await run(['reminders', 'list', KIND, grain, '--json'])).stdout);
    expect(left.reminders.map((x: { name: string }) => x.name)).to.deep.equal(['once']);
    const again = await run(['reminders', 'remove', KIND, grain, 'hourly']);
    expect(again.code).to.equal(5);
    expect(again.stderr).to.contain(`has no reminder or job 'hourly'`);
    // Its owner was told: it no longer holds it.
    const deadline = Date.now() + 20_000;
    let after = await listKind();
    while (after.total !== before - 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await listKind();
    }
    expect(after.total).to.equal(before - 1);
    expect(after.reminders.some((x) => x.identity === grain && x.name === 'hourly')).to.equal(
      false,
    );
  });

  it('exit codes: unknown kind 5, a member without reminders 1, usage 2, unreachable 3, token 4', async () => {
    const unknown = await run(['reminders', 'list', 'nope.Kind', 'x']);
    expect(unknown.code).to.equal(5);
    expect(unknown.stderr).to.contain('no member hosts kind nope.Kind');
    expect((await run(['reminders', 'remove', 'nope.Kind', 'x', 'y'])).code).to.equal(5);
    expect((await run(['reminders', 'list', 'nope.Kind'])).code).to.equal(5);
    const url2 = await adminUrlOf(tc.nodes[2]!);
    const without = await run(['reminders', 'remove', KIND, 'r1', 'once'], {
      GRANARY_ADMIN_URL: url2,
    });
    expect(without.code).to.equal(1);
    expect(without.stderr).to.contain('runs without reminders');
    for (const bad of [
      ['reminders', 'frob'],
      ['reminders', 'remove', KIND, 'r1'],
      ['reminders', 'list', KIND, 'r1', '--limit', '5'],
      ['reminders', 'list', KIND, '--limit', '0'],
      ['reminders', 'list', KIND, '--limit', '1001'],
    ]) {
      expect((await run(bad)).code, bad.join(' ')).to.equal(2);
    }
    const port = await freePort();
    const down = await run(['reminders', 'list', KIND, 'r1'], {
      GRANARY_ADMIN_URL: `http://127.0.0.1:${port}`,
    });
    expect(down.code).to.equal(3);
    expect(down.stderr).to.contain('cannot reach the admin API');
    const refused = await run(['reminders', 'remove', KIND, 'r1', 'once'], {
      GRANARY_ADMIN_TOKEN: 'wrong-wrong-wrong-wrong',
    });
    expect(refused.code).to.equal(4);
    // Nothing was removed by the refused and failed attempts.
    const r1 = JSON.parse((await run(['reminders', 'list', KIND, 'r1', '--json'])).stdout);
    expect(r1.reminders.map((x: { name: string }) => x.name).sort()).to.deep.equal([
      'hourly',
      'once',
    ]);
    const help = await run(['reminders', '--help']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.contain('granary reminders remove <kind> <id> <name>');
  });

  it('reminders: the per-kind summary', async () => {
    const s = await run(['reminders']);
    expect(s.code, s.stderr).to.equal(0);
    expect(s.stdout).to.match(
      new RegExp(`^${KIND.replace('.', '\\.')}\\s+\\d+\\s+\\d+\\s+\\S+Z$`, 'm'),
    );
  });
});
