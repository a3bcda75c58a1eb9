import { expect } from 'chai';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { startTcpProxy, type TcpProxyHandle } from '../src/index';

describe('startTcpProxy', () => {
  let echo: Server;
  let echoPort = 0;
  let proxy: TcpProxyHandle;
  const sockets: Socket[] = [];

  before(async () => {
    echo = createServer((s) => {
      s.on('error', () => undefined);
      s.pipe(s);
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    echoPort = (echo.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => echo.close(() => r())));
  beforeEach(async () => {
    proxy = await startTcpProxy({ target: `127.0.0.1:${echoPort}` });
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await proxy.close();
  });

  function open(): Promise<{ socket: Socket; received: () => string }> {
    return new Promise((resolve) => {
      let data = '';
      const socket = connect({ host: '127.0.0.1', port: proxy.port }, () =>
        resolve({ socket, received: () => data }),
      );
      socket.on('data', (c) => (data += c.toString()));
      socket.on('error', () => undefined);
      sockets.push(socket);
    });
  }

  function waitFor(check: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const t = setInterval(() => {
        if (check()) {
          clearInterval(t);
          resolve();
        }
      }, 5);
    });
  }

  it('forwards both ways', async () => {
    const c = await open();
    c.socket.write('hello');
    await waitFor(() => c.received() === 'hello');
  });

  it('a partition holds bytes without closing; heal delivers them in order', async () => {
    const c = await open();
    c.socket.write('a');
    await waitFor(() => c.received() === 'a');
    proxy.partition();
    c.socket.write('b');
    c.socket.write('c');
    // Give the bytes every chance to pass: a partition must not let them.
    await new Promise((r) => setTimeout(r, 100));
    expect(c.received()).to.equal('a');
    expect(c.socket.destroyed).to.equal(false);
    proxy.heal();
    await waitFor(() => c.received() === 'abc');
  });

  it('cut() resets open connections', async () => {
    const c = await open();
    await waitFor(() => proxy.connections === 1);
    const closed = new Promise<void>((r) => c.socket.once('close', () => r()));
    proxy.cut();
    await closed;
    expect(proxy.connections).to.equal(0);
  });
});
