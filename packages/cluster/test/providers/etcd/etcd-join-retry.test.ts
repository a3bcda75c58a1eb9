import { expect } from 'chai';
import { silentLogger } from '@granary/core';
import { JoinTimeoutError } from '../../../src/errors';
import { retryUntil, type JoinRetry } from '../../../src/providers/etcd/etcd-join-retry';

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
    await retryUntil(
      Date.now() + 30_000,
      async () => {
        if (++calls < 3) throw new Error('deadline exceeded (test)');
      },
      retry(),
    );
    expect(calls, 'attempts').to.equal(3);
  });

  it('gives up at the deadline with JoinTimeoutError naming the step, endpoints and last error', async () => {
    let calls = 0;
    const err = await retryUntil(
      Date.now() + 300,
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
      Date.now() + 30_000,
      () => Promise.reject(cause),
      retry(true),
    ).catch((e: unknown) => e);
    expect(err).to.equal(cause);
  });
});
