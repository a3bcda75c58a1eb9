import { expect } from 'chai';
import { Cluster, MemoryProvider, MemoryClusterTable } from '@granary/cluster';
import { Admin } from '../src/admin';
import { isLoopback, resolveToken, TokenCheck } from '../src/admin-token';
import { AdminConfigError } from '../src/errors';
import { HttpMount } from './fixtures/http-mount';

describe('admin token', () => {
  it('is required beyond loopback; generated (and printed once) only on loopback', async () => {
    expect(isLoopback('127.0.0.1')).to.equal(true);
    expect(isLoopback('::1')).to.equal(true);
    expect(isLoopback('localhost')).to.equal(true);
    expect(isLoopback('0.0.0.0')).to.equal(false);
    expect(isLoopback('10.1.2.3')).to.equal(false);
    expect(() => resolveToken(undefined, '0.0.0.0')).to.throw(AdminConfigError, /not loopback/);
    expect(() => resolveToken('short', '127.0.0.1')).to.throw(AdminConfigError, /at least 16/);
    const generated = resolveToken(undefined, '127.0.0.1');
    expect(generated.generated).to.equal(true);
    expect(generated.token).to.have.length(32);
    expect(resolveToken('a-given-token-of-some-length', '0.0.0.0')).to.deep.equal({
      token: 'a-given-token-of-some-length',
      generated: false,
    });
  });

  it('Admin.enable refuses an option it does not know (tokn was ignored: a token was generated)', async () => {
    const cluster = { ops: undefined } as unknown as Cluster;
    const options = { tokn: 'a-given-token-of-some-length' } as never;
    const err = await Admin.enable(cluster, options).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(AdminConfigError);
    expect((err as Error).message)
      .to.include("'tokn'")
      .and.include("did you mean 'token'?");
  });

  it('matches only the exact bearer token', () => {
    const check = new TokenCheck('the-right-token-0123456789');
    expect(check.matches('Bearer the-right-token-0123456789')).to.equal(true);
    expect(check.matches('bearer the-right-token-0123456789')).to.equal(true);
    for (const h of [
      undefined,
      '',
      'Bearer',
      'Bearer the-right-token-012345678',
      'Basic the-right-token-0123456789',
      'the-right-token-0123456789',
    ]) {
      expect(check.matches(h), String(h)).to.equal(false);
    }
  });

  it('Admin.enable refuses a non-loopback server without a token, and a cluster without ops', async () => {
    const table = new MemoryClusterTable();
    const cluster = await Cluster.start({
      name: 'tok',
      provider: new MemoryProvider(table),
      kinds: [],
    });
    const open = await HttpMount.listen(0, '0.0.0.0');
    try {
      await Admin.enable(cluster).then(
        () => expect.fail('enabled without an ops server'),
        (err: unknown) =>
          expect(AdminConfigError.is(err) && (err as Error).message).to.match(/ops option/),
      );
      await Admin.enable(cluster, { mount: open }).then(
        () => expect.fail('enabled beyond loopback without a token'),
        (err: unknown) => expect((err as Error).message).to.match(/not loopback/),
      );
      const lines: string[] = [];
      const loop = await HttpMount.listen(0, '127.0.0.1');
      const admin = await Admin.enable(cluster, { mount: loop, print: (l) => lines.push(l) });
      expect(lines).to.have.length(1);
      expect(lines[0]).to.contain(admin.token);
      const res = await fetch(`${loop.url}/v1`, {
        headers: { authorization: `Bearer ${admin.token}` },
      });
      expect(res.status).to.equal(200);
      admin.close();
      await loop.close();
    } finally {
      await open.close();
      await cluster.shutdown();
    }
  });
});
