import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { startRedis, type RedisHandle } from '@granary/testkit';

/** Longest a finished mocha run may take to exit by itself (shutdown grace periods included). */
const EXIT_WITHIN_MS = 15_000;

describe('lifecycle: a mocha run of a cluster app exits by itself', function () {
  this.timeout(60_000);
  let redis: RedisHandle;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('without --exit, after closing what the README says to close', async () => {
    const spec = join(__dirname, 'fixtures', 'app.spec.js');
    const mocha = require.resolve('mocha/bin/mocha.js');
    const child = spawn(
      process.execPath,
      [mocha, '--no-exit', '--no-config', '--timeout', '20000', spec],
      {
        env: { ...process.env, LIFECYCLE_REDIS: redis.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    let passedAt = 0;
    child.stdout.on('data', () => {
      if (passedAt === 0 && /1 passing/.test(output)) passedAt = Date.now();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    expect(code, output).to.equal(0);
    expect(output).to.contain('1 passing');
    expect(Date.now() - passedAt).to.be.lessThan(EXIT_WITHIN_MS);
  });
});
