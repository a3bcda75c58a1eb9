import { expect } from 'chai';
import { ActorSystem, InvalidArgumentError, PID, Remote } from '@granary/core';
import { GranaryClient } from '../../src/client/granary-client';
import { MAX_IDENTITY_BYTES } from '../../src/cluster';
import { GrainError } from '../../src/errors';
import type { Grain, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes, quiet } from './memory-nodes';

/** Throws what it is asked to; with `call`, calls that identity from its own context. */
class Thrower implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const m = ctx.message as { throw?: unknown; call?: string; tell?: string };
    if (m.call !== undefined) return outcome(() => ctx.request('thrower', m.call!, { ok: 1 }));
    if (m.tell !== undefined) return outcome(async () => ctx.send('thrower', m.tell!, 'x'));
    if (m.throw === undefined) return { identity: ctx.identity };
    throw m.throw;
  }
}

/** What `call` ended with, as data the caller can look at. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await call() };
  } catch (err) {
    return { error: (err as Error).name, argument: (err as { argument?: string }).argument };
  }
}

/** Identities no entry point may take (a lone surrogate travels as U+FFFD: another grain). */
const BAD_IDENTITIES = [
  '',
  'x'.repeat(MAX_IDENTITY_BYTES + 1),
  'é'.repeat(600),
  'x'.repeat(1 << 20),
  '\ud800',
  'a\udc00b',
];

describe('grain calls: API input', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(() => [kind('thrower', () => new Thrower(), { shardCount: 4 })]);
  before(() => nodes.add('a'));
  after(() => nodes.stopAll());

  it(`refuses an empty identity and one over ${MAX_IDENTITY_BYTES} bytes with InvalidArgumentError`, async () => {
    const [a] = nodes.nodes;
    for (const identity of BAD_IDENTITIES) {
      let error: unknown;
      try {
        await a!.request('thrower', identity, { throw: 1 });
      } catch (err) {
        error = err;
      }
      expect(error, `${identity.length} chars`).to.be.instanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).to.equal('identity');
      expect(() => a!.send('thrower', identity, 'x')).to.throw(InvalidArgumentError);
    }
  });

  it("refuses them in a grain's own calls (ctx.request, ctx.send) with InvalidArgumentError", async () => {
    const [a] = nodes.nodes;
    for (const identity of BAD_IDENTITIES) {
      for (const how of ['call', 'tell']) {
        const reply = await a!.request('thrower', 'caller', { [how]: identity });
        expect(reply, `${how} ${identity.length} chars`).to.deep.equal({
          error: 'InvalidArgumentError',
          argument: 'identity',
        });
      }
    }
  });

  it('refuses them through a GranaryClient, whose link keeps serving', async () => {
    const [a] = nodes.nodes;
    const client = await GranaryClient.connect({
      name: 'grains-test',
      gateways: [a!.address],
      requestTimeoutMs: 3000,
    });
    try {
      for (const identity of BAD_IDENTITIES) {
        let error: unknown;
        try {
          await client.request('thrower', identity, { ok: 1 });
        } catch (err) {
          error = err;
        }
        expect(error, `${identity.length} chars`).to.be.instanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).argument).to.equal('identity');
        expect(() => client.send('thrower', identity, 'x')).to.throw(InvalidArgumentError);
      }
      expect(await client.request('thrower', 'fine', {})).to.deep.equal({ identity: 'fine' });
    } finally {
      await client.close();
    }
  });

  it("refuses, on the owner, a peer's call naming an identity no API lets through", async () => {
    const [a] = nodes.nodes;
    // A hostile client: the real remote, its grain PIDs written by hand past every API check.
    const system = new ActorSystem({ name: 'raw-peer', logger: quiet });
    try {
      await new Remote(system).start({
        listen: false,
        advertisedHost: 'raw-peer.client.invalid',
        port: 1,
        clusterName: 'grains-test',
        memberId: 'raw-peer',
      });
      const before = nodes.log.length;
      for (const identity of ['', 'x'.repeat(MAX_IDENTITY_BYTES + 1)]) {
        const pid = new PID(a!.address, `$g/thrower/${identity}`);
        const error = await system.root.request(pid, {}, { timeoutMs: 2000 }).catch((e) => e);
        expect(error, `${identity.length} chars`).to.be.instanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).argument).to.equal('identity');
      }
      expect(nodes.log.slice(before), 'no activation').to.deep.equal([]);
      const ok = new PID(a!.address, '$g/thrower/fine');
      expect(await system.root.request(ok, {}, { timeoutMs: 2000 })).to.deep.equal({
        identity: 'fine',
      });
    } finally {
      await system.shutdown();
    }
  });

  it('takes identities with a slash, a NUL, a brace or a character outside the BMP as they are', async () => {
    const [a] = nodes.nodes;
    for (const identity of ['a/b', 'a\u0000b', '{x}', 'smile-\u{1F600}', 'é'.repeat(300)]) {
      expect(await a!.request('thrower', identity, {})).to.deep.equal({ identity });
    }
  });

  it('describes a thrown non-Error value to the caller (JSON or the string), never [object Object]', async () => {
    const [a] = nodes.nodes;
    const cases: Array<[unknown, string]> = [
      [{ reason: 'out of stock', sku: 7 }, '{"reason":"out of stock","sku":7}'],
      ['plain string', 'plain string'],
      [42, '42'],
    ];
    for (const [value, message] of cases) {
      let error: unknown;
      try {
        await a!.request('thrower', 'id-1', { throw: value });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(GrainError);
      expect((error as GrainError).message)
        .to.contain(message)
        .and.not.to.contain('[object Object]');
    }
  });
});
