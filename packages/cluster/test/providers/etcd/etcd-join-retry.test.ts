import { expect } from 'chai';
import { silentLogger } from '@granary/core';
import { JoinTimeoutError } from '../../../src/errors';
import {
  JoinBudget,
  retryUntil,
  type JoinRetry,
} from '../../../src/providers/etcd/etcd-join-retry';

const retry = (stopped = false): JoinRetry => ({
  what: 'read the topology',
  endpoints: ['http://127.0.0.1:1'],
  joinTimeoutMs: 10_000,
  logger: silentLogger,
  stopped: () => stopped,
});

describe('retryUntil (a join step after registration)', () => {
  it('retries a step that fails until it succeeds', async () => {
    let calls = 0;
    const deadlines: number[] = [];
    await retryUntil(
      new JoinBudget(30_000, 1000),
      async (timeoutMs) => {
        deadlines.push(timeoutMs);
        if (++calls < 4) throw new Error('deadline exceeded (test)');
      },
      retry(),
    );
    expect(calls, 'attempts').to.equal(4);
    // Each failed attempt gives the next one a longer deadline, up to 4 x requestTimeoutMs.
    expect(deadlines, 'attempt deadlines').to.deep.equal([1000, 2000, 4000, 4000]);
  });

  it('gives up at the deadline with JoinTimeoutError naming the step, endpoints and last error', async () => {
    let calls = 0;
    const err = await retryUntil(
      new JoinBudget(300, 100),
      async () => {
        calls++;
        throw new Error('deadline exceeded (test)');
      },
      retry(),
    ).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(JoinTimeoutError);
    expect((err as Error).message)
      .to.contain('read the topology')
      .and.contain('http://127.0.0.1:1')
      .and.contain('deadline exceeded (test)');
    expect(calls, 'attempts before giving up').to.be.at.least(1);
  });

  it('stops at once when the provider stopped, with the error as it is', async () => {
    const cause = new Error('client closed (test)');
    const err = await retryUntil(
      new JoinBudget(30_000, 1000),
      () => Promise.reject(cause),
      retry(true),
    ).catch((e: unknown) => e);
    expect(err).to.equal(cause);
  });
});

describe('JoinBudget (how long a join may take)', () => {
  it('renews on each answered step: a slow registration leaves the next step joinTimeoutMs', async () => {
    const budget = new JoinBudget(300, 100);
    const first = budget.deadline;
    await new Promise((r) => setTimeout(r, 200));
    budget.progress();
    expect(budget.deadline - first, 'the deadline moved by the time spent').to.be.at.least(150);
    expect(budget.deadline - Date.now(), 'a whole joinTimeoutMs left').to.be.above(250);
  });

  it('never shortens the deadline, and an attempt gets at least requestTimeoutMs', () => {
    const budget = new JoinBudget(1500, 1000);
    const deadline = budget.deadline;
    budget.progress();
    expect(budget.deadline).to.be.at.least(deadline);
    expect(budget.attemptTimeoutMs(1)).to.equal(1000);
    // Attempt 3 would get 4,000 ms: the budget's ~1.5 s left bounds it.
    expect(budget.attemptTimeoutMs(3)).to.be.within(1000, 1500);
  });
});
