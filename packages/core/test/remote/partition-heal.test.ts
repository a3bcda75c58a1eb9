import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NodeProcess, startTestNetwork, testNetworkUnavailable } from '@granary/testkit';
import { expect } from 'chai';

const FIXTURE = path.join(__dirname, 'fixtures', 'remote-node.js');
/** Longer than TCP's first five retransmissions (0.2 + 0.4 + ... + 3.2 s): the sixth is 6.4 s off. */
const PARTITION_MS = 7000;
/**
 * linkProbeMs of both nodes; the default unless GRANARY_TEST_LINK_PROBE_MS says otherwise (0
 * measures the behaviour without probing: then the calls after the heal wait for TCP's next
 * retransmission, several seconds away, and the assertion below fails).
 */
const PROBE_MS = Number(process.env.GRANARY_TEST_LINK_PROBE_MS ?? 1000);
const PORT = 7400;

describe('Remote link across a healed partition (network namespaces, root)', function () {
  this.timeout(60_000);

  it('carries calls again within 4 s of the heal on the link that was open before it', async function () {
    const unavailable = testNetworkUnavailable();
    if (unavailable !== undefined) {
      console.log(`      skipped: ${unavailable}`);
      this.skip();
    }
    // Two test hosts: host 1 calls host 0 over a link it opened; then host 0 is cut off.
    const net = startTestNetwork(2);
    const secret = 'partition-heal-test-secret';
    const [h0, h1] = [net.hosts[0]!, net.hosts[1]!];
    const spawn = (host: typeof h0, extra: object): NodeProcess =>
      NodeProcess.spawn({
        script: FIXTURE,
        exec: host.exec,
        config: { host: host.ip, port: PORT, secret, linkProbeMs: PROBE_MS, ...extra },
      });
    const callee = spawn(h0, {});
    let caller: NodeProcess | undefined;
    try {
      await callee.waitFor((l) => typeof l.address === 'string', 15_000);
      caller = spawn(h1, { callers: 4, callTo: `${h0.ip}:${PORT}` });
      await caller.waitFor((l) => l.ok === true, 15_000);
      await sleep(1000);
      net.partition(0);
      await sleep(PARTITION_MS);
      net.heal(0);
      const healedAt = Date.now();
      const calls = (): Array<{ ok: boolean; at: number }> =>
        caller!.lines
          .map((l) => l.data as { ok?: boolean; at?: number })
          .filter((d): d is { ok: boolean; at: number } => typeof d.ok === 'boolean');
      const resumed = (): number | undefined => calls().find((d) => d.ok && d.at > healedAt)?.at;
      const limit = healedAt + 20_000;
      while (resumed() === undefined && Date.now() < limit) await sleep(20);
      const resumedAt = resumed() ?? Infinity;
      await sleep(1000);
      const during = calls().filter((d) => d.at > healedAt - PARTITION_MS && d.at <= healedAt);
      const after = calls().filter((d) => d.at > resumedAt + 200);
      const recoveryMs = resumedAt - healedAt;
      console.log(
        `      first call answered ${recoveryMs} ms after the heal (linkProbeMs ${PROBE_MS}); ` +
          `${during.filter((d) => d.ok).length}/${during.length} ok while cut off; ` +
          `${after.filter((d) => d.ok).length}/${after.length} ok from 200 ms after the first`,
      );
      expect(recoveryMs).to.be.below(4000);
      expect(after.length).to.be.above(0);
      expect(after.every((d) => d.ok)).to.equal(true);
    } finally {
      await caller?.stop();
      await callee.stop();
      net.close();
    }
  });
});
