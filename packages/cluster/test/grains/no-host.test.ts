import { expect } from 'chai';
import { UnknownKindError } from '@granary/core';
import { NoHostError } from '../../src/errors';
import type { Grain } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import type { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { waitForClusters } from '../cluster/converge';
import { MemoryNodes } from './memory-nodes';

class Echo implements Grain {
  receive(): unknown {
    return 'pong';
  }
}

describe('calls to a kind whose hosts are gone (honest errors)', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(() => [kind('echo', () => new Echo(), { shardCount: 4 })], {
    ttlMs: 300,
  });
  after(() => nodes.stopAll());

  it('NoHostError naming the hosts that dropped out, never UnknownKindError; UnknownKindError for a kind never hosted', async () => {
    const h1 = await nodes.add('h1');
    const h2 = await nodes.add('h2');
    const caller = await nodes.add('caller', []);
    expect(await caller.request('echo', 'x', 'ping')).to.equal('pong');
    // Both hosts stop renewing their leases (as when they cannot reach the membership store).
    for (const h of [h1, h2]) (h.provider as MemoryProvider).crash();
    await waitForClusters(
      [caller],
      () => caller.topology.members.every((m) => m.id === 'caller'),
      'the hosts dropped out of the caller’s view',
    );
    const t0 = Date.now();
    const err = await caller
      .request('echo', 'x', 'ping', { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NoHostError);
    expect(err).to.include({ kind: 'echo', dropped: 2, membershipUnavailable: false });
    expect(Date.now() - t0, 'it retried within its deadline').to.be.at.least(290);
    const unknown = await caller.request('ehco', 'x', 'ping').catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(UnknownKindError);
  });
});
