import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { silentLogger } from '@granary/core';
import { Cluster, SeedProvider } from '@granary/cluster';
import { Admin } from '../src/admin';
import type { AdminMount } from '../src/admin-options';

const TOKEN = 'events-backlog-test-token-0123';
type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** The response of a viewer that reads nothing: what was written piles up in writableLength. */
class StalledResponse {
  writableLength = 0;
  destroyed = false;
  readonly closeListeners: Array<() => void> = [];
  private onDestroy!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.onDestroy = resolve));
  writeHead(): this {
    return this;
  }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.writableLength += Buffer.byteLength(chunk);
    return false;
  }
  destroy(): void {
    this.destroyed = true;
    for (const l of this.closeListeners) l();
    this.onDestroy();
  }
}

describe('admin API: the live view (/v1/events)', function () {
  this.timeout(30_000);
  let cluster: Cluster;
  let admin: Admin;

  before(async () => {
    cluster = await Cluster.start({
      name: 'events',
      id: 'node',
      provider: new SeedProvider({ isSeed: true, logger: silentLogger }),
      kinds: [],
      remote: { host: '127.0.0.1', port: 0 },
      logger: silentLogger,
    });
  });
  after(async () => {
    admin?.close();
    await cluster?.shutdown({ graceful: false });
  });

  it('closes the stream of a viewer that leaves 1 MiB unread, instead of holding its samples', async () => {
    const routes = new Map<string, Handler>();
    const mount: AdminMount = {
      url: 'http://127.0.0.1:1',
      route: (method, path, handler) => void routes.set(`${method} ${path}`, handler),
    };
    admin = await Admin.enable(cluster, { mount, token: TOKEN, sampleIntervalMs: 10 });
    const res = new StalledResponse();
    const req = {
      headers: { authorization: `Bearer ${TOKEN}` },
      on: (event: string, l: () => void) => event === 'close' && res.closeListeners.push(l),
    };
    await routes.get('GET /v1/events')!(
      req as unknown as IncomingMessage,
      res as unknown as ServerResponse,
    );
    // The kernel's socket buffers are full: what is written from now on stays in the process.
    res.writableLength = 1024 * 1024 - 1;
    const destroyed = await Promise.race([
      res.closed.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000)),
    ]);
    expect(destroyed, 'the stalled stream was closed').to.equal(true);
    const held = res.writableLength;
    await new Promise((r) => setTimeout(r, 50));
    expect(res.writableLength, 'nothing written after the close').to.equal(held);
  });
});
