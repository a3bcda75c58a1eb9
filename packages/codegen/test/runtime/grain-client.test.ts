import { expect } from 'chai';
import type { CallOptions, InvokeContext, MessageCodec, MessageInit } from '../../src/runtime';
import {
  GRAIN_INVOKE_TYPE,
  GrainBase,
  GrainClient,
  InvalidReplyError,
  UnimplementedError,
  defineProtoFile,
  defineService,
  grainInvoke,
  method,
  tagTypeName,
  typeNameOf,
  unimplemented,
} from '../../src/runtime';
import { FakeGrainError, InMemoryCluster, RecordingRegistry } from '../helpers/in-memory-cluster';

// What the generator writes for `service Echo { rpc Say(Line) returns (Line); rpc Shout(Line) returns (Line); }`,
// by hand, so the runtime is tested without @granary/core and @granary/cluster.
interface Line {
  text: string;
  n: string;
}
const registry = new RecordingRegistry();
const file = defineProtoFile(registry, 'test/echo.proto', {
  test: {
    nested: {
      echo: {
        nested: {
          Line: {
            edition: 'proto3',
            fields: { text: { type: 'string', id: 1 }, n: { type: 'int64', id: 2 } },
          },
        },
      },
    },
  },
});
const Line: MessageCodec<Line> = file.codec('test.echo.Line');
const EchoService = defineService<EchoGrain, InvokeContext>('test.echo.Echo', [
  method('test.echo.Echo/Say', Line, Line, (g, req, ctx) => g.say(req, ctx)),
  method('test.echo.Echo/Shout', Line, Line, (g, req, ctx) => g.shout(req, ctx)),
  method('test.echo.Echo/Same', Line, Line, (g, req) => g.same(req)),
]);
abstract class EchoGrain extends GrainBase<InvokeContext> {
  protected readonly $service = EchoService;
  say(_req: Line, _ctx: InvokeContext): Promise<Line> | Line {
    return unimplemented('test.echo.Echo/Say');
  }
  shout(_req: Line, _ctx: InvokeContext): Promise<Line> | Line {
    return unimplemented('test.echo.Echo/Shout');
  }
  same(req: Line): Line {
    return req;
  }
}
class EchoClient extends GrainClient {
  say(req: MessageInit<Line>, options?: CallOptions): Promise<Line> {
    return this.$invoke('test.echo.Echo/Say', Line, Line, req, options);
  }
  shout(req: Line, options?: CallOptions): Promise<Line> {
    return this.$invoke('test.echo.Echo/Shout', Line, Line, req, options);
  }
  same(req: MessageInit<Line>): Promise<Line> {
    return this.$invoke('test.echo.Echo/Same', Line, Line, req);
  }
  /** A method a newer .proto has and this grain does not. */
  whisper(req: Line): Promise<Line> {
    return this.$invoke('test.echo.Echo/Whisper', Line, Line, req);
  }
}

/** Implements only Say: Shout stays the generated default. */
class OnlySays extends EchoGrain {
  defaults: unknown[] = [];
  override async say(req: Line): Promise<Line> {
    if (req.text === 'boom') throw Object.assign(new Error('grain exploded'), { code: 'ERR_BOOM' });
    if (req.text === 'nothing') return undefined as unknown as Line;
    return { text: `${req.text}!`, n: (BigInt(req.n) + 1n).toString() };
  }
  override receiveDefault(ctx: InvokeContext): void {
    this.defaults.push(ctx.message);
  }
}

class NoDefault extends EchoGrain {}

describe('GrainClient and GrainBase', () => {
  let cluster: InMemoryCluster;
  beforeEach(() => {
    cluster = new InMemoryCluster(registry, {
      echo: () => new OnlySays(),
      bare: () => new NoDefault(),
    });
  });

  it('calls the grain method and decodes its response, int64 as decimal string', async () => {
    const client = new EchoClient(cluster, 'echo', 'e1');
    expect(await client.say({ text: 'hi', n: '9007199254740993' })).to.deep.equal({
      text: 'hi!',
      n: '9007199254740994',
    });
  });

  it('a request and response that encode to zero bytes survive the wire (empty payloads)', async () => {
    // proto3 leaves an empty bytes field off the wire; protobufjs decodes it as a plain [].
    const reply = await new EchoClient(cluster, 'echo', 'e1').same({ text: '', n: '0' });
    expect(reply).to.deep.equal({ text: '', n: '0' });
  });

  it('sends a granary.GrainInvoke whose method is package.Service/Method', async () => {
    await new EchoClient(cluster, 'echo', 'e1').say({ text: 'a', n: '1' });
    const sent = cluster.requests[0];
    expect(sent.kind).to.equal('echo');
    expect(sent.identity).to.equal('e1');
    expect(typeNameOf(sent.message)).to.equal(GRAIN_INVOKE_TYPE);
    expect((sent.message as { method: string }).method).to.equal('test.echo.Echo/Say');
    expect(Line.decode((sent.message as { payload: Uint8Array }).payload)).to.deep.equal({
      text: 'a',
      n: '1',
    });
  });

  it('passes every GrainCallOptions field to the cluster as given, retries included', async () => {
    const signal = new AbortController().signal;
    const client = new EchoClient(cluster, 'echo', 'e1');
    await client.say(
      { text: 'a', n: '1' },
      { timeoutMs: 1234, idempotent: true, signal, retries: 1 },
    );
    await client.say({ text: 'b', n: '2' });
    expect(cluster.requests[0].options).to.deep.equal({
      timeoutMs: 1234,
      idempotent: true,
      signal,
      retries: 1,
    });
    expect(cluster.requests[1].options).to.equal(undefined);
  });

  it('a request may leave fields out: the grain gets them as defaults', async () => {
    expect(await new EchoClient(cluster, 'echo', 'e1').say({ text: 'partial' })).to.deep.equal({
      text: 'partial!',
      n: '1',
    });
    expect(await new EchoClient(cluster, 'echo', 'e1').same({})).to.deep.equal({
      text: '',
      n: '0',
    });
  });

  it('an rpc the grain does not override fails with UnimplementedError at the caller', async () => {
    const err = await new EchoClient(cluster, 'echo', 'e1').shout({ text: 'a', n: '1' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(UnimplementedError);
    expect((err as UnimplementedError).method).to.equal('test.echo.Echo/Shout');
    expect((err as UnimplementedError).cause).to.be.instanceOf(FakeGrainError);
  });

  it('a method unknown to the grain (newer client) fails with UnimplementedError', async () => {
    const err = await new EchoClient(cluster, 'echo', 'e1')
      .whisper({ text: 'a', n: '1' })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnimplementedError);
    expect((err as Error).message).to.contain('test.echo.Echo/Whisper');
  });

  it('an error thrown by the grain arrives as the cluster error, and the client sends once', async () => {
    const err = await new EchoClient(cluster, 'echo', 'e1')
      .say({ text: 'boom', n: '0' }, { retries: 3 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(FakeGrainError);
    expect(err).to.include({
      originalCode: 'ERR_BOOM',
      originalName: 'Error',
      message: 'grain exploded',
    });
    expect(cluster.requests).to.have.length(1);
  });

  it('a grain method that returns nothing fails with MissingResponseError naming the method', async () => {
    const err = await new EchoClient(cluster, 'echo', 'e1')
      .say({ text: 'nothing', n: '0' })
      .catch((e: unknown) => e);
    expect(err).to.include({
      originalCode: 'ERR_MISSING_RESPONSE',
      originalName: 'MissingResponseError',
    });
    expect((err as Error).message)
      .to.contain('test.echo.Echo/Say')
      .and.contain('test.echo.Line');
  });

  it('a payload that is not the request type fails with ERR_PAYLOAD_DECODE', async () => {
    const err = await cluster
      .request('echo', 'e1', grainInvoke('test.echo.Echo/Say', new Uint8Array([0x0a, 0xff, 0xff])))
      .catch((e: unknown) => e);
    expect(err).to.include({
      originalCode: 'ERR_PAYLOAD_DECODE',
      originalName: 'PayloadDecodeError',
    });
  });

  it('a reply that is not a GrainInvokeResult is an InvalidReplyError', async () => {
    const odd = new InMemoryCluster(registry, {
      echo: () => ({ receive: (ctx: InvokeContext) => ctx.respond({ hello: 'world' }) }),
    });
    const err = await new EchoClient(odd, 'echo', 'e1')
      .say({ text: 'x', n: '0' })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidReplyError);
    expect((err as Error).message).to.contain('test.echo.Echo/Say');
  });

  it('plain messages go to receiveDefault', async () => {
    const client = new EchoClient(cluster, 'echo', 'e1');
    await client.say({ text: 'x', n: '0' }); // activates the grain
    cluster.send('echo', 'e1', Line.create({ text: 'plain', n: '5' }));
    const grain = cluster.grains.get('echo/e1') as OnlySays;
    expect(grain.defaults).to.have.length(1);
    expect(typeNameOf(grain.defaults[0])).to.equal('test.echo.Line');
  });

  it('a plain message to a grain without receiveDefault is an UnimplementedError', async () => {
    const err = await cluster
      .request('bare', 'b1', tagTypeName('test.echo.Line', { text: 'x', n: '1' }))
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(FakeGrainError);
    expect(err).to.include({
      originalCode: 'ERR_UNIMPLEMENTED',
      originalName: 'UnimplementedError',
    });
    expect((err as Error).message).to.contain('receiveDefault');
  });
});
