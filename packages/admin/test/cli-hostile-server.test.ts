import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', 'bin', 'granary.cjs');

/** Runs the CLI; resolves with its exit code and what it wrote to stderr. */
function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

/**
 * A server at the CLI's --url that answers without end: the CLI must stop reading with a clear
 * error, not hold the stream in memory until it dies (or hang on a file that never ends).
 */
describe('granary CLI against a server that answers without end', function () {
  this.timeout(60_000);
  let server: Server;
  let url: string;
  const chunk = Buffer.alloc(1 << 20, 'x');

  before(async () => {
    server = createServer((req, res) => {
      res.writeHead(200, {
        'content-type': req.url === '/v1/events' ? 'text/event-stream' : 'application/json',
      });
      // Unbounded: 1 MiB at a time for as long as the client reads.
      const more = (): void => {
        while (res.write(chunk));
      };
      res.on('drain', more);
      more();
      req.on('close', () => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('members: stops past 64 MiB of answer with exit code 1, naming the limit', async () => {
    const r = await run(['members', '--url', url, '--token', 't']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('answered more than 67108864 bytes');
  });

  it('watch: stops past 1 MiB without an event end with exit code 1', async () => {
    const r = await run(['watch', '--url', url, '--token', 't', '--count', '1']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain("without an event's end");
  });

  it('call --proto on a file that never ends (/dev/zero) or a directory: exit code 2 at once', async () => {
    for (const proto of ['/dev/zero', __dirname]) {
      const r = await run([
        'call',
        'k',
        'g-1',
        'M',
        '--json',
        '{}',
        '--proto',
        proto,
        '--url',
        url,
        '--token',
        't',
      ]);
      expect(r.code, proto).to.equal(2);
      expect(r.stderr, proto).to.contain('is not a regular file');
    }
  });
});
