import { expect } from 'chai';
import type { TestCluster } from '@granary/testkit';
import { adminUrlOf, startAdminCluster, TOKEN } from './fixtures/admin-cluster';
import { granary, type Run } from './fixtures/granary-cli';

/** Longest a drain may take here before its run is killed (the CLI's own wait is 120 s). */
const DRAIN_BOUND_MS = 60_000;

function expectExit0(d: Run, member: string): void {
  expect(
    d.code,
    `exit code (null: still running after ${DRAIN_BOUND_MS} ms)\n${d.stderr}`,
  ).to.equal(0);
  expect(d.stdout).to.contain(`${member} drained`);
}

describe('granary drain of members started without onDrained', function () {
  this.timeout(240_000);
  let tc: TestCluster;

  before(async () => {
    // Drained, node-1..3 stay running; node-3's admin API is on a server of its own, which the
    // cluster's shutdown does not close.
    tc = await startAdminCluster(4, 6, { noOnDrained: [1, 2, 3], ownServer: [3] });
  });

  after(async () => {
    await tc?.stop();
  });

  const drain = async (member: number, via: number) =>
    granary(
      ['drain', `node-${member}`],
      { GRANARY_ADMIN_URL: await adminUrlOf(tc.nodes[via]!), GRANARY_ADMIN_TOKEN: TOKEN },
      DRAIN_BOUND_MS,
    );

  it('exits 0 once the member left, asked through another member', async () => {
    expectExit0(await drain(2, 0), 'node-2');
  });

  it('exits 0 once the member left, asked through the member itself', async () => {
    expectExit0(await drain(1, 1), 'node-1');
  });

  it('exits 0 once the member left, asked through its admin API that stays open', async () => {
    expectExit0(await drain(3, 3), 'node-3');
  });
});
