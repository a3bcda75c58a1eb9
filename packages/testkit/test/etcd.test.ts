import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { Etcd3 } from 'etcd3';
import { startEtcd, isAlive, BinaryMissingError } from '../src/index';

describe('startEtcd', () => {
  it('starts a real etcd that answers put/get, and kill() leaves no process or dir', async () => {
    const etcd = await startEtcd();
    const pid = etcd.pid!;
    const dir = etcd.dataDir!;
    const client = new Etcd3({ hosts: etcd.endpoints });
    try {
      await client.put('granary/smoke').value('hello');
      expect(await client.get('granary/smoke').string()).to.equal('hello');
    } finally {
      client.close();
      await etcd.kill();
    }
    expect(isAlive(pid)).to.equal(false);
    expect(existsSync(dir)).to.equal(false);
  });

  it('restarts on the same port with its data kept', async () => {
    const etcd = await startEtcd();
    const client = new Etcd3({ hosts: etcd.endpoints });
    try {
      await client.put('k').value('v');
      await etcd.kill({ keepData: true });
      await etcd.restart();
      expect(await client.get('k').string()).to.equal('v');
    } finally {
      client.close();
      await etcd.stop();
    }
  });

  it('names the Debian package when the binary is missing', async () => {
    const err = await startEtcd({ binary: '/nonexistent/etcd' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(BinaryMissingError);
    expect((err as Error).message).to.contain('apt-get install -y etcd-server');
  });
});
