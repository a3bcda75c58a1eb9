import { expect } from 'chai';
import { join } from 'node:path';
import { freePort, type TestCluster } from '@granary/testkit';
import { adminUrlOf, startAdminCluster, TOKEN } from './fixtures/admin-cluster';
import { granary } from './fixtures/granary-cli';

const PROTO_DIR = join(__dirname, '..', '..', 'test', 'protos');
const KIND = 'admintest.Counter';

describe('granary CLI against a running cluster', function () {
  this.timeout(120_000);
  let tc: TestCluster;
  let env: Record<string, string>;
  const run = (args: string[]) => granary(args, env);

  before(async () => {
    tc = await startAdminCluster();
    env = { GRANARY_ADMIN_URL: await adminUrlOf(tc.nodes[0]!), GRANARY_ADMIN_TOKEN: TOKEN };
  });

  after(async () => {
    await tc?.stop();
  });

  it('call: a generated grain with only its .proto, 64-bit and bytes as JSON', async () => {
    const args = [
      'call',
      KIND,
      'c1',
      'Add',
      '--json',
      '{"amount":"5","tag":"AQI="}',
      '--proto',
      join(PROTO_DIR, 'admin-test.proto'),
      '-I',
      PROTO_DIR,
    ];
    const first = await run(args);
    expect(first.code, first.stderr).to.equal(0);
    const reply = JSON.parse(first.stdout);
    expect(reply.total).to.equal('5');
    expect(reply.member).to.match(/^node-\d$/);
    expect(reply.at.seconds).to.be.a('string');
    const second = JSON.parse((await run(args)).stdout);
    expect(second.total).to.equal('10');
    expect(second.activationId).to.equal(reply.activationId);
    const badField = await run([
      'call',
      KIND,
      'c1',
      'Add',
      '--json',
      '{"amount":"1","nope":1}',
      '--proto',
      join(PROTO_DIR, 'admin-test.proto'),
    ]);
    expect(badField.code).to.equal(2);
    expect(badField.stderr).to.contain('unknown field nope');
    const badMethod = await run([
      'call',
      KIND,
      'c1',
      'Sub',
      '--json',
      '{}',
      '--proto',
      join(PROTO_DIR, 'admin-test.proto'),
    ]);
    expect(badMethod.code).to.equal(5);
    expect(badMethod.stderr).to.contain('has no method Sub');
  });

  it('members: a table, and --json', async () => {
    const t = await run(['members']);
    expect(t.code, t.stderr).to.equal(0);
    const lines = t.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^MEMBER\s+ADDRESS\s+STATUS\s+KINDS/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).to.deep.equal([
      'node-0',
      'node-1',
      'node-2',
    ]);
    for (const l of lines.slice(1)) expect(l).to.match(/\sup\s/);
    const j = await run(['members', '--json']);
    expect(j.code).to.equal(0);
    expect(JSON.parse(j.stdout).members).to.have.length(3);
  });

  it('shards, locate, grains: tables that match the JSON', async () => {
    const s = await run(['shards', '--kind', KIND]);
    expect(s.code, s.stderr).to.equal(0);
    expect(s.stdout).to.contain(`${KIND}: 16/16 shards held, 0 moving`);
    expect(
      s.stdout
        .trim()
        .split('\n')
        .filter((l) => l.startsWith(KIND + ' ')),
    ).to.have.length(16);
    const lj = JSON.parse((await run(['locate', KIND, 'c1', '--json'])).stdout);
    expect(lj.active).to.equal(true);
    const l = await run(['locate', KIND, 'c1']);
    expect(l.code).to.equal(0);
    expect(l.stdout).to.contain(`${KIND}/c1`);
    expect(l.stdout).to.contain(lj.owner.id);
    expect(l.stdout).to.contain(lj.activation.activationId);
    const g = await run(['grains', '--kind', KIND, '--top', '3']);
    expect(g.code, g.stderr).to.equal(0);
    expect(g.stdout).to.match(new RegExp(`${KIND.replace('.', '\\.')}/c1\\s+node-\\d\\s+2\\s`));
    const gj = JSON.parse((await run(['grains', '--json'])).stdout);
    expect(gj.perKind[KIND]).to.equal(1);
  });

  it('prints a grain identity holding terminal controls escaped, and --json exactly', async () => {
    // An identity a web app could pass on from its users: retitles the terminal (OSC ... BEL),
    // forges a row, reverses the line (U+202E) and opens an 8-bit CSI (U+009B).
    const evil = 'evil\x1b]0;owned\x07\nFORGED row\u202e\x9b31m';
    const args = ['call', KIND, evil, 'Add', '--json', '{"amount":"1"}'];
    const called = await run([...args, '--proto', join(PROTO_DIR, 'admin-test.proto')]);
    expect(called.code, called.stderr).to.equal(0);
    const outputs = [
      await run(['grains', '--kind', KIND, '--top', '50']),
      await run(['locate', KIND, evil]),
      await run(['grains', '--json']),
      await run(['locate', KIND, evil, '--json']),
    ];
    for (const o of outputs) {
      expect(o.code, o.stderr).to.equal(0);
      // eslint-disable-next-line no-control-regex -- no control character but the newline
      expect(o.stdout + o.stderr).to.not.match(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(o.stdout).to.not.match(/^FORGED/m);
    }
    expect(outputs[0]!.stdout).to.contain(`${KIND}/evil\\u001b]0;owned\\u0007\\u000aFORGED`);
    const top = (JSON.parse(outputs[2]!.stdout) as { top: Array<{ identity: string }> }).top;
    expect(top.map((g) => g.identity)).to.include(evil);
    expect(JSON.parse(outputs[3]!.stdout).identity).to.equal(evil);
  });

  it('pools: workers per member once a pool is used', async () => {
    const node = tc.nodes[0]!.process!;
    const from = node.lines.length;
    node.send({ cmd: 'pool', calls: 12 });
    await node.waitFor((d) => d.type === 'pool-done', 20_000, from);
    const p = await run(['pools']);
    expect(p.code, p.stderr).to.equal(0);
    const rows = p.stdout.trim().split('\n').slice(1);
    expect(rows).to.have.length(3);
    expect(rows.reduce((n, r) => n + Number(r.split(/\s+/)[2]), 0)).to.equal(6);
  });

  it('watch: one line per second, stops after --count', async () => {
    const w = await run(['watch', '--count', '2']);
    expect(w.code, w.stderr).to.equal(0);
    const lines = w.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^TIME\s+MEMBERS\s+ACTIVATIONS/);
    expect(lines).to.have.length(3);
    expect(lines[1]).to.match(/^\d\d:\d\d:\d\d\s+3\s/);
  });

  it('exit codes and help', async () => {
    expect(
      (await granary(['members'], { ...env, GRANARY_ADMIN_TOKEN: 'wrong-wrong-wrong-wrong' })).code,
    ).to.equal(4);
    expect(
      (
        await granary(['members'], {
          GRANARY_ADMIN_URL: env.GRANARY_ADMIN_URL!,
          GRANARY_ADMIN_TOKEN: '',
        })
      ).code,
    ).to.equal(4);
    const port = await freePort();
    const down = await granary(['members'], {
      ...env,
      GRANARY_ADMIN_URL: `http://127.0.0.1:${port}`,
    });
    expect(down.code).to.equal(3);
    expect(down.stderr).to.contain('cannot reach the admin API');
    expect((await run(['locate', 'nope', '1'])).code).to.equal(5);
    expect((await run(['locate', KIND])).code).to.equal(2);
    expect((await run(['frobnicate'])).code).to.equal(2);
    expect((await run(['grains', '--by', 'size'])).code).to.equal(2);
    const help = await run(['help', 'call']);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.contain('granary call <kind> <id> <Method>');
    for (const c of ['members', 'shards', 'locate', 'grains', 'pools', 'call', 'drain', 'watch']) {
      const h = await run([c, '--help']);
      expect(h.code, c).to.equal(0);
      expect(h.stdout, c).to.contain(`granary ${c}`);
    }
  });

  it('a member that does not answer: the table still comes, exit code 6', async () => {
    tc.nodes[1]!.process!.pause();
    try {
      const r = await run(['members', '--timeout', '20000']);
      expect(r.code).to.equal(6);
      expect(r.stderr).to.contain('not answering: node-1');
      expect(r.stdout).to.match(/node-1\s+\S+\s+not answering/);
    } finally {
      tc.nodes[1]!.process!.resume();
    }
  });

  it('drain: waits until the member has left', async () => {
    const d = await run(['drain', 'node-2']);
    expect(d.code, d.stderr).to.equal(0);
    expect(d.stdout).to.contain('node-2 drained and left the cluster');
    tc.nodes[2]!.alive = false;
    const m = JSON.parse((await run(['members', '--json'])).stdout);
    expect(m.members.map((x: { id: string }) => x.id)).to.deep.equal(['node-0', 'node-1']);
  });
});
