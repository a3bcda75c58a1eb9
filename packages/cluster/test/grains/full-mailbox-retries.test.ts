import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { DEFAULT_KIND_OPTIONS, kind } from '../../src/grains/kind';
import { OverloadedError } from '../../src/overload/errors';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';

/** Holds every turn until the test releases them all. */
let gate: Promise<void> = Promise.resolve();
class Held implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    await gate;
    return ctx.message;
  }
}

const README = join(__dirname, '../../../README.md');

/** The README's table row whose first cell starts with `cell`. */
function row(cell: string): string {
  const line = readFileSync(README, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`| ${cell}`));
  expect(line, `README row ${cell}`).to.not.equal(undefined);
  return line!;
}

describe('A full grain mailbox, as the cluster README says', function () {
  this.timeout(10_000);
  let cluster: Cluster;

  before(async () => {
    cluster = await Cluster.start({
      name: 'full-mailbox-retries',
      id: 'm1',
      provider: new MemoryProvider(new MemoryClusterTable(), { ttlMs: 10_000 }),
      kinds: [kind('held', () => new Held(), { shardCount: 4, mailbox: { capacity: 2 } })],
    });
  });
  after(() => cluster.shutdown({ graceful: false }));

  /** Ten calls at once to one grain whose turns wait for `release`. */
  async function flood(options: { retries?: number }): Promise<unknown[]> {
    let release!: () => void;
    gate = new Promise((r) => (release = r));
    const calls = Array.from({ length: 10 }, (_, i) =>
      cluster.request('held', 'h', i, { timeoutMs: 5000, ...options }).catch((e: unknown) => e),
    );
    setTimeout(() => release(), 50);
    return Promise.all(calls);
  }

  it('re-sends refused calls by default: every call is answered', async () => {
    expect(await flood({})).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('refuses the calls beyond the capacity with OverloadedError (mailbox.capacity) at retries: 0', async () => {
    const results = await flood({ retries: 0 });
    const refused = results.filter((r) => OverloadedError.is(r));
    expect(refused.length).to.be.greaterThan(0);
    expect((refused[0] as OverloadedError).limit).to.equal('mailbox.capacity');
  });

  it('is described by the README: default capacity, OverloadedError, retries unlimited', () => {
    const capacity = DEFAULT_KIND_OPTIONS.mailbox.capacity.toLocaleString('en-US');
    expect(row('grain mailbox')).to.include(`default ${capacity}`).and.include('OverloadedError');
    expect(row('`Activation.held`')).to.include('OverloadedError');
    expect(row('`retries`')).to.include('OverloadedError').and.not.include('0 for a full mailbox');
    expect(readFileSync(README, 'utf8')).to.not.include('MailboxFullError');
  });
});
