import * as net from 'node:net';
import { expect } from 'chai';
import { ActorSystem } from '../../src/actor-system';
import { InsecureRemoteError, InvalidOptionError } from '../../src/errors';
import { isLoopbackHost } from '../../src/remote/internal/secure-binding';
import { Remote } from '../../src/remote/remote';
import type { RemoteOptions } from '../../src/remote/remote-options';
import { recordingLogger, type RecordedLine } from '@granary/testkit';
import { rejectionOf } from './helpers';

const SECRET = 'a-cluster-secret-of-32-bytes-000';

/** True if something accepts TCP connections on host:port. */
function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('Remote secure by default', function () {
  this.timeout(20000);
  const systems: ActorSystem[] = [];
  afterEach(async () => {
    await Promise.all(systems.map((s) => s.shutdown()));
    systems.length = 0;
  });

  async function start(options: RemoteOptions): Promise<{ remote: Remote; logs: RecordedLine[] }> {
    const { logger, lines: logs } = recordingLogger();
    const system = new ActorSystem({ logger });
    systems.push(system);
    const remote = new Remote(system);
    await remote.start(options);
    return { remote, logs };
  }

  it('refuses to bind 0.0.0.0 with neither secret nor tls, naming both options', async () => {
    const port = 45000 + Math.floor(Math.random() * 10000);
    const err = await rejectionOf(start({ host: '0.0.0.0', port }));
    expect(err).to.be.instanceOf(InsecureRemoteError);
    expect((err as InsecureRemoteError).code).to.equal('ERR_INSECURE_REMOTE');
    expect(err.message).to.contain('secret').and.to.contain('tls').and.to.contain('insecure');
    expect(await listening('127.0.0.1', port)).to.equal(false);
  });

  it('refuses server-only TLS beyond loopback: it does not authenticate peers', async () => {
    const err = await rejectionOf(
      start({ host: '0.0.0.0', port: 0, tls: { cert: 'x', key: 'y', requireClientCert: false } }),
    );
    expect(err).to.be.instanceOf(InsecureRemoteError);
  });

  it('binds 0.0.0.0 with a secret, without a warning', async () => {
    const { remote, logs } = await start({
      host: '0.0.0.0',
      advertisedHost: '127.0.0.1',
      port: 0,
      secret: SECRET,
    });
    const port = Number(remote.address.split(':')[1]);
    expect(await listening('127.0.0.1', port)).to.equal(true);
    expect(logs.filter((l) => l.level === 'warn')).to.have.length(0);
  });

  it('binds 0.0.0.0 with insecure: true and warns once', async () => {
    const { logs } = await start({ host: '0.0.0.0', port: 0, insecure: true });
    const warnings = logs.filter((l) => l.level === 'warn');
    expect(warnings).to.have.length(1);
    expect(warnings[0]!.msg).to.contain('without authentication');
  });

  it('binds loopback without a secret and without a warning', async () => {
    const { logs } = await start({ host: '127.0.0.1', port: 0 });
    expect(logs.filter((l) => l.level === 'warn')).to.have.length(0);
  });

  it('refuses a secret shorter than 16 bytes', async () => {
    const err = await rejectionOf(start({ host: '127.0.0.1', port: 0, secret: 'short' }));
    expect(err).to.be.instanceOf(InvalidOptionError);
    expect(err.message).to.contain('secret');
  });

  it('a port in use is an InvalidOptionError naming port and the address, with the cause', async () => {
    const { remote } = await start({ host: '127.0.0.1', port: 0 });
    const port = Number(remote.address.split(':')[1]);
    const err = await rejectionOf(start({ host: '127.0.0.1', port }));
    expect(err).to.be.instanceOf(InvalidOptionError).with.property('option', 'port');
    expect(err.message).to.contain(`cannot listen on 127.0.0.1:${port}`).and.contain('EADDRINUSE');
    expect((err as Error).cause).to.have.property('code', 'EADDRINUSE');
  });

  it('knows the loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(h), h).to.equal(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'node-a', '192.168.1.1', '::ffff:10.0.0.1'])
      expect(isLoopbackHost(h), h).to.equal(false);
  });
});
