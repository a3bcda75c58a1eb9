import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NodeProcess } from '@granary/testkit';
import { expect } from 'chai';
import { Props } from '../../src/props';
import type { TestNode } from './helpers';
import { startNode, stopNodes, until } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'remote-node.js');
const SECRET = 'incomplete-messages-sender-secret-0123456789';
const TIMEOUT_MS = 1500;
/** Tries at stopping the sender in the middle of a message (it sends them back to back). */
const TRIES = 10;

interface LargeLine {
  large: true;
  ok: boolean;
  error?: string;
  message?: string;
  at: number;
}

// A member whose large message stops halfway (here: its process stopped mid-message) loses its
// link once the message went incompleteMessageTimeoutMs without a chunk. Its requests then fail
// at once with a typed error naming the limit, instead of waiting for their deadlines, and the
// next ones go over a new link.
describe('Remote large messages: a sender that stalls mid-message', function () {
  this.timeout(90_000);
  const nodes: TestNode[] = [];
  let sender: NodeProcess | undefined;
  afterEach(async () => {
    await sender?.stop();
    sender = undefined;
    await stopNodes(nodes);
  });

  it('is closed after incompleteMessageTimeoutMs; its requests fail with EndpointUnavailableError naming the limit', async () => {
    const limits = { incompleteMessageTimeoutMs: TIMEOUT_MS };
    const a = await startNode({ secret: SECRET, limits });
    nodes.push(a);
    a.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (ctx.sender) ctx.respond(ctx.message);
      }),
      'echo',
    );
    const held = (): number => a.remote.traffic!.incompleteBytes;
    sender = NodeProcess.spawn({
      script: FIXTURE,
      config: { secret: SECRET, largeTo: a.address, largeBytes: 2 * 1024 * 1024 },
    });
    const lines = (): LargeLine[] =>
      sender!.lines.map((l) => l.data as unknown as LargeLine).filter((d) => d.large === true);
    await sender.waitFor((l) => l.large === true && l.ok === true, 20_000);

    // Stop it while A holds part of a message; the data in flight then lands, and A should
    // still hold an incomplete one (unless the stop fell between two messages: try again).
    let stalled = false;
    for (let i = 0; i < TRIES && !stalled; i++) {
      await until(() => held() > 0, 10_000, 'a large message to be arriving');
      sender.pause();
      await sleep(300);
      stalled = held() > 0;
      if (!stalled) sender.resume();
    }
    expect(stalled, `a message left incomplete in ${TRIES} tries`).to.equal(true);
    const stoppedAt = Date.now();
    await until(() => held() === 0, TIMEOUT_MS + 5000, 'the stalled message to be dropped');
    expect(Date.now() - stoppedAt).to.be.at.least(TIMEOUT_MS - 400);
    expect(a.remote.stats.limitExceeded).to.equal(1);
    const logged = a.logs.find((l) => l.msg === 'remote peer exceeded a limit; its link is closed');
    expect(logged?.fields.limit).to.equal('limits.incompleteMessageTimeoutMs');

    const before = lines().length;
    const resumedAt = Date.now();
    sender.resume();
    await until(
      () =>
        lines()
          .slice(before)
          .some((d) => !d.ok),
      10_000,
      'the sender’s requests to fail',
    );
    const failed = lines()
      .slice(before)
      .filter((d) => !d.ok);
    for (const d of failed) {
      expect(d.error).to.equal('EndpointUnavailableError');
      expect(d.message, JSON.stringify(d)).to.contain('(limits.incompleteMessageTimeoutMs)');
    }
    expect(failed[0]!.at - resumedAt, 'failed at once, not at their 30 s deadline').to.be.below(
      5000,
    );
    // The next requests go over a new link.
    await until(
      () =>
        lines()
          .slice(before)
          .some((d) => d.ok && d.at > failed[0]!.at),
      20_000,
      'a request to succeed again',
    );
  });
});
