import { expect } from 'chai';
import { isAlive, startEtcd } from '@granary/testkit';
import type { EtcdHandle } from '@granary/testkit';
import { DemoProcess, waitUntilGone } from './helpers/demo-process';

/** The first pong must come this soon after the demo starts (issue 10's acceptance). */
const FIRST_PONG_WITHIN_S = 10;

describe('the demo (npm run demo)', function () {
  this.timeout(90_000);
  let demo: DemoProcess | undefined;
  let etcd: EtcdHandle;
  /** `--provider etcd` against a testkit etcd (the other tests run the default, seed). */
  const withEtcd = (...args: string[]): string[] => [
    '--provider',
    'etcd',
    '--etcd',
    etcd.endpoints.join(','),
    ...args,
  ];

  before(async () => {
    etcd = await startEtcd();
  });

  after(async () => {
    await etcd?.stop();
  });

  afterEach(() => {
    demo?.cleanup();
    demo = undefined;
  });

  /** The run of one demo, checked: exit 0, pongs from the pongers, no node left. */
  async function runToEnd(args: string[], seconds: number, nodes: number): Promise<string> {
    demo = new DemoProcess(args);
    const exit = await demo.waitForExit(seconds);
    const output = demo.tail(400);
    expect(exit, output).to.deep.equal({ code: 0, signal: null });
    const pids = demo.nodePids();
    expect(pids, output).to.have.length(nodes);
    expect(pids.filter(isAlive), 'nodes left running').to.deep.equal([]);
    expect(output).to.match(new RegExp(`\\[demo\\]\\s+all ${nodes} nodes stopped`));
    return output;
  }

  it('with no options but --seconds (seed provider): pongs from a multi-node cluster within 10 s, clean exit, no process left', async () => {
    const output = await runToEnd(['--seconds', '8'], 8, 4);
    expect(output).to.match(/\[seed\]\s.* ready role=seed/);
    const lines = output.split('\n');
    const rpc = lines.filter((l) =>
      /^\[pinger\]\s.*\bpong cnt=\d+ via=rpc from=ponger-[ab]\b/.test(l),
    );
    expect(rpc.length, output).to.be.at.least(3);
    expect(
      lines.some((l) => /^\[pinger\]\s.*\bpong cnt=\d+ via=message from=ponger-[ab]\b/.test(l)),
    ).to.equal(true);
    const first = /first pong (\d+\.\d) s after start/.exec(output);
    expect(Number(first?.[1]), output).to.be.below(FIRST_PONG_WITHIN_S);
    expect(output).to.match(
      /\[ponger-[ab]\]\s.* activated grain=messages\.Ponger\/ponger-1 activation=\S+/,
    );
    expect(output).to.match(/\[ponger-a\]\s.* ready role=ponger/);
    expect(output).to.match(/\[ponger-b\]\s.* ready role=ponger/);
  });

  it('a durable reminder wakes the passivated digest grain every 4 s (private Redis from PATH)', async function () {
    const output = await runToEnd(['--seconds', '16'], 16, 4);
    if (/no Redis for this run/.test(output)) {
      console.log(
        `      skipped: the demo found no redis-server (${/no Redis for this run \(([^)]*)\)/.exec(output)?.[1]})`,
      );
      this.skip();
    }
    expect(output).to.match(/\[demo\]\s+started redis-server at redis:\/\/127\.0\.0\.1:\d+/);
    const ticks = [
      ...output.matchAll(/\[ponger-[ab]\]\s.*\breminder fired grain=digest\/ponger-1 tick=(\d+)/g),
    ].map((m) => Number(m[1]));
    expect(ticks.length, output).to.be.at.least(2);
    expect(ticks, 'each tick once, in order').to.deep.equal(
      [...new Set(ticks)].sort((a, b) => a - b),
    );
    // Woken each time: an activation per fire, and a passivation (idle) between fires.
    const activated = output.match(/\bdigest activated grain=digest\/ponger-1\b/g)?.length ?? 0;
    const passivated = output.match(/\bdigest passivated\b.*\breason=idle\b/g)?.length ?? 0;
    expect(activated, output).to.be.at.least(ticks.length);
    expect(passivated, output).to.be.at.least(ticks.length - 1);
    expect(output).to.match(
      new RegExp(
        `\\[demo\\]\\s+${ticks.length} reminder fires of digest/ponger-1 \\(ticks ${ticks.join(', ')}\\)`,
      ),
    );
  });

  it('--kill-after: SIGKILLs the node hosting ponger-1, pongs resume from the other one, the pause is printed', async () => {
    demo = new DemoProcess(['--seconds', '16', '--kill-after', '5']);
    const exit = await demo.waitForExit(16);
    const output = demo.tail(400);
    const killed = /SIGKILLed (ponger-[ab]) \(pid \d+\), which hosted ponger-1/.exec(output)?.[1];
    expect(killed, output).to.be.a('string');
    const resumed = /pongs resumed from (ponger-[ab]): paused (\d+\.\d+) s/.exec(output);
    expect(resumed, output).to.not.equal(null);
    expect(resumed?.[1]).to.not.equal(killed);
    expect(Number(resumed?.[2])).to.be.above(0);
    const summary =
      /failover: (ponger-[ab]) killed at \d+\.\d s, pongs paused (\d+\.\d+) s, resumed from (ponger-[ab])/.exec(
        output,
      );
    expect(summary?.slice(1), output).to.deep.equal([killed, resumed?.[2], resumed?.[1]]);
    expect(exit, output).to.deep.equal({ code: 0, signal: null });
    expect(demo.nodePids().filter(isAlive)).to.deep.equal([]);
  });

  it('Ctrl-C (SIGINT) stops every node gracefully before --seconds', async () => {
    demo = new DemoProcess(['--seconds', '60']);
    await demo.waitForLine(/\bpong cnt=\d+ via=rpc\b/, 20_000);
    const started = Date.now();
    demo.signal('SIGINT');
    const exit = await demo.waitForExit(0);
    expect(Date.now() - started).to.be.below(30_000);
    expect(exit, demo.tail()).to.deep.equal({ code: 0, signal: null });
    expect(demo.tail()).to.match(/interrupted: stopping the nodes/);
    expect(demo.nodePids().filter(isAlive)).to.deep.equal([]);
  });

  it('Ctrl-C while the cluster is still starting stops what was started, leaving no process', async () => {
    demo = new DemoProcess(['--seconds', '60']);
    await demo.waitForLine(/\[demo\]\s+started seed/, 20_000);
    demo.signal('SIGINT');
    const exit = await demo.waitForExit(0);
    expect(exit.signal, demo.tail()).to.equal(null);
    expect(demo.tail()).to.match(/interrupted: stopping the nodes/);
    expect(demo.tail()).to.match(/\[demo\]\s+all \d nodes stopped/);
    expect(demo.nodePids().filter(isAlive)).to.deep.equal([]);
  });

  it('a runner killed with SIGKILL leaves no node behind (each node watches its stdin pipe)', async () => {
    demo = new DemoProcess(['--seconds', '60']);
    await demo.waitForLine(/\bpong cnt=\d+ via=rpc\b/, 20_000);
    const pids = demo.nodePids();
    expect(pids).to.have.length(4);
    demo.signal('SIGKILL');
    await demo.exited;
    await waitUntilGone(pids, 20_000);
  });

  it('--provider etcd: the same cluster without a seed node, on a testkit etcd', async () => {
    const output = await runToEnd(withEtcd('--seconds', '8'), 8, 3);
    expect(output).to.not.match(/^\[seed\]/m);
    expect(output).to.match(/\[pinger\]\s.*\bpong cnt=\d+ via=rpc from=ponger-[ab]\b/);
    const first = /first pong (\d+\.\d) s after start/.exec(output);
    expect(Number(first?.[1]), output).to.be.below(FIRST_PONG_WITHIN_S);
  });
});
