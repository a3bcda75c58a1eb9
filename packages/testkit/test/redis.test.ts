import { expect } from 'chai';
import { existsSync } from 'node:fs';
import Redis from 'ioredis';
import { startRedis, isAlive, BinaryMissingError } from '../src/index';

describe('startRedis', () => {
  it('starts a real redis that answers set/get, and kill() leaves no process or dir', async () => {
    const redis = await startRedis();
    const pid = redis.pid!;
    const dir = redis.dataDir!;
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      await client.set('granary:smoke', 'hello');
      expect(await client.get('granary:smoke')).to.equal('hello');
    } finally {
      client.disconnect();
      await redis.kill();
    }
    expect(isAlive(pid)).to.equal(false);
    expect(existsSync(dir)).to.equal(false);
  });

  it('pause() freezes the server and resume() thaws it', async () => {
    const redis = await startRedis();
    const client = new Redis(redis.url, { commandTimeout: 300, maxRetriesPerRequest: 0 });
    try {
      await client.ping();
      redis.pause();
      const err = await client.ping().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error);
      redis.resume();
      expect(await client.ping()).to.equal('PONG');
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });

  it('keeps acknowledged writes across kill({ keepData: true }) and restart() (append-only file, the default)', async () => {
    const redis = await startRedis();
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await client.config('GET', 'appendonly')).to.deep.equal(['appendonly', 'yes']);
      await client.set('granary:kept', 'yes');
      await redis.kill({ keepData: true });
      await redis.restart();
      expect(await client.get('granary:kept')).to.equal('yes');
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });

  it('appendonly: false keeps nothing across a restart', async () => {
    const redis = await startRedis({ appendonly: false });
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      await client.set('granary:gone', 'yes');
      await redis.kill({ keepData: true });
      await redis.restart();
      expect(await client.get('granary:gone')).to.equal(null);
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });

  it('names the Debian package when the binary is missing', async () => {
    const err = await startRedis({ binary: '/nonexistent/redis-server' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(BinaryMissingError);
    expect((err as Error).message).to.contain('apt-get install -y redis-server');
  });
});
