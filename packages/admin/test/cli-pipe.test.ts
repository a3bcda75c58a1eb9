import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', 'bin', 'granary.cjs');

describe('granary CLI writing to a closed pipe', function () {
  this.timeout(30_000);

  it('exits quietly when the reader has gone (granary shards | head)', async () => {
    const child = spawn(process.execPath, [BIN, 'help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reader closes before the CLI writes: its write fails with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr, 'no unhandled EPIPE').to.not.contain('EPIPE');
    expect(code).to.equal(0);
  });
});
