import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { GranaryClient } from '../../src/client/granary-client';
import type { Grain, GrainCallOptions, GrainContext } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryNodes } from './memory-nodes';

/** Answers; with `call`, calls another identity from its own context with those options. */
class Caller implements Grain {
  async receive(ctx: GrainContext): Promise<unknown> {
    const m = ctx.message as { call?: string; options?: GrainCallOptions };
    if (m.call === undefined) return { identity: ctx.identity };
    try {
      return { ok: await ctx.request('caller', m.call, {}, m.options) };
    } catch (err) {
      return { error: (err as Error).name, argument: (err as { argument?: string }).argument };
    }
  }
}

/** Options as JavaScript (or a config typed any) passes them: TypeScript's check not reaching. */
const loose = (o: unknown): GrainCallOptions => o as GrainCallOptions;

describe('grain calls: options', function () {
  this.timeout(20_000);
  const nodes = new MemoryNodes(() => [kind('caller', () => new Caller(), { shardCount: 4 })]);
  before(() => nodes.add('a'));
  after(() => nodes.stopAll());

  async function refusal(call: () => Promise<unknown>): Promise<InvalidArgumentError> {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }

  it('refuses an option a grain call does not have, naming it and the one likely meant', async () => {
    const [a] = nodes.nodes;
    const cases: Array<[unknown, string, string | undefined]> = [
      [{ timeout: 100 }, 'options.timeout', 'timeoutMs'],
      [{ timeoutMS: 100 }, 'options.timeoutMS', 'timeoutMs'],
      [{ retry: 0 }, 'options.retry', 'retries'],
      [{ idempotent: true, deadline: 5 }, 'options.deadline', undefined],
    ];
    for (const [options, argument, meant] of cases) {
      const err = await refusal(() => a!.request('caller', 'x', {}, loose(options)));
      expect(err.argument, JSON.stringify(options)).to.equal(argument);
      if (meant !== undefined) expect(err.message).to.contain(`did you mean '${meant}'`);
    }
  });

  it('refuses options that are not an object', async () => {
    const [a] = nodes.nodes;
    for (const options of [500, 'fast', true]) {
      const err = await refusal(() => a!.request('caller', 'x', {}, loose(options)));
      expect(err.argument).to.equal('options');
    }
  });

  it('takes every GrainCallOptions field, undefined or null options, and an empty object', async () => {
    const [a] = nodes.nodes;
    const full: Required<Omit<GrainCallOptions, 'traceContext'>> = {
      timeoutMs: 2000,
      signal: new AbortController().signal,
      idempotent: true,
      retries: 1,
    };
    for (const options of [full, {}, undefined, null, { timeoutMs: undefined }]) {
      expect(await a!.request('caller', 'y', {}, loose(options))).to.deep.equal({
        identity: 'y',
      });
    }
  });

  it("refuses them in a grain's own calls and through a GranaryClient", async () => {
    const [a] = nodes.nodes;
    expect(
      await a!.request('caller', 'from', { call: 'to', options: { timeout: 100 } }),
    ).to.deep.equal({ error: 'InvalidArgumentError', argument: 'options.timeout' });
    const client = await GranaryClient.connect({
      name: 'grains-test',
      gateways: [a!.address],
      requestTimeoutMs: 3000,
    });
    try {
      const err = await refusal(() => client.request('caller', 'x', {}, loose({ timout: 1 })));
      expect(err.argument).to.equal('options.timout');
      expect(await client.request('caller', 'z', {}, { timeoutMs: 2000 })).to.deep.equal({
        identity: 'z',
      });
    } finally {
      await client.close();
    }
  });
});
