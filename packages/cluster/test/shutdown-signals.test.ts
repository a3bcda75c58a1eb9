import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { recordingLogger } from '@granary/testkit';
import { Cluster } from '../src/cluster';
import { kind } from '../src/grains/kind';
import { MemoryProvider } from '../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../src/providers/memory/memory-table';
import { installShutdownSignals, type ShutdownSignalsOptions } from '../src/shutdown-signals';

/** A grain whose deactivation takes a while, so a leave is observably in progress. */
function slowToLeave(drained: string[]) {
  return kind('slow', () => ({
    receive: () => 'ok',
    onDeactivate: async () => {
      await new Promise((r) => setTimeout(r, 200));
      drained.push('slow/1');
    },
  }));
}

async function startMember(drained: string[]) {
  const { logger, lines } = recordingLogger();
  const cluster = await Cluster.start({
    name: 'signals',
    provider: new MemoryProvider(new MemoryClusterTable()),
    kinds: [slowToLeave(drained)],
    shardCount: 4,
    logger,
  });
  await cluster.request('slow', '1', 'hi');
  return { cluster, lines };
}

describe('installShutdownSignals', () => {
  it('a signal starts a graceful leave that the member logs: the signal, then how long it took', async () => {
    const drained: string[] = [];
    const { cluster, lines } = await startMember(drained);
    const remove = installShutdownSignals(cluster, { signals: ['SIGUSR2'], exit: false });
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      await cluster.shutdown(); // the leave the signal started, not a second one
    } finally {
      remove();
    }
    expect(drained).to.deep.equal(['slow/1']);
    const leaving = lines.find((l) => l.level === 'info' && /^leaving the cluster/.test(l.msg));
    expect(leaving?.fields).to.include({ reason: 'SIGUSR2', graceful: true, activations: 1 });
    const left = lines.find((l) => l.level === 'info' && /^left the cluster/.test(l.msg));
    expect(left?.fields).to.have.property('ms').that.is.a('number');
    expect(lines.indexOf(left!)).to.be.greaterThan(lines.indexOf(leaving!));
  });
});

describe('Cluster.shutdown', () => {
  it('a second call while leaving resolves when the leave has ended, not at once', async () => {
    const drained: string[] = [];
    const { cluster } = await startMember(drained);
    const first = cluster.shutdown();
    await cluster.shutdown();
    expect(drained, 'drained before the second call resolved').to.deep.equal(['slow/1']);
    await first;
  });

  it('refuses an option it does not know, naming the one meant (signal for signals was ignored)', () => {
    const options = { signal: ['SIGUSR2'] } as unknown as ShutdownSignalsOptions;
    expect(() => installShutdownSignals({ shutdown: async () => {} }, options))
      .to.throw(InvalidOptionError, "did you mean 'signals'?")
      .with.property('option', 'signal');
  });
});
