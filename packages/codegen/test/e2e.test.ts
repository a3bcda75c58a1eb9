import { expect } from 'chai';
import {
  Cluster,
  DeadlineExceededError,
  GrainError,
  MemoryClusterTable,
  MemoryProvider,
} from '@granary/cluster';
import type { GrainContext } from '@granary/cluster';
import { freePort } from '@granary/testkit';
import { UnimplementedError } from '../src/runtime';
import type { CallOptions, Empty, MessageInit } from '../src/runtime';
import { CalculatorClient, CalculatorGrain, calculatorKind } from './golden/e2e/calculator.granary';
import type { DivideReply, DivideRequest, SleepRequest } from './golden/e2e/calculator.granary';
import {
  PingMessage,
  PongerClient,
  PongerGrain,
  pongerKind,
} from './golden/messages/protos.granary';
import type { PongMessage } from './golden/messages/protos.granary';
import {
  Tick,
  TickRequest,
  TickerClient,
  TickerGrain,
  tickerKind,
} from './golden/streaming/ticker.granary';
import type { Summary } from './golden/streaming/ticker.granary';

/** Pending Sleep calls; released in `after` so no grain turn outlives the test. */
const sleepers = new Set<() => void>();

/** Implements Divide and Sleep; Square is left to the generated default (unimplemented). */
class Calculator extends CalculatorGrain {
  override divide(req: DivideRequest, ctx: GrainContext): DivideReply {
    const divisor = BigInt(req.divisor);
    if (divisor === 0n) {
      throw Object.assign(new RangeError(`cannot divide ${req.dividend} by zero`), {
        code: 'ERR_DIVIDE_BY_ZERO',
      });
    }
    const dividend = BigInt(req.dividend);
    return {
      quotient: (dividend / divisor).toString(),
      remainder: (dividend % divisor).toString(),
      servedBy: ctx.cluster.id,
    };
  }

  /** Divides on another Calculator grain, calling it with the grain context as the cluster. */
  override relay(req: DivideRequest, ctx: GrainContext): Promise<DivideReply> {
    return CalculatorClient.for(ctx, `${ctx.identity}-next`).divide(req);
  }

  /** Never answers by itself: the test releases sleepers when it is done. */
  override async sleep(_req: SleepRequest): Promise<Empty> {
    await new Promise<void>((resolve) => sleepers.add(resolve));
    return {};
  }
}

/** Plain (non-rpc) messages the Ponger grains received, with the member that got them. */
const plainReceived: { cnt: string; member: string }[] = [];
let onPlain: (() => void) | undefined;

class Ponger extends PongerGrain {
  override ping(ping: PingMessage): PongMessage {
    return { cnt: (BigInt(ping.cnt) + 1n).toString() };
  }

  override receiveDefault(ctx: GrainContext): void {
    if (PingMessage.is(ctx.message)) {
      plainReceived.push({ cnt: PingMessage.from(ctx.message).cnt, member: ctx.cluster.id });
      onPlain?.();
    }
  }
}

/** The unary half of a service that also has streaming rpcs (left out by the generator). */
class Ticker extends TickerGrain {
  private count = 0n;

  override now(req: TickRequest, ctx: GrainContext): Tick {
    return { channel: `${req.channel}@${ctx.cluster.id}`, seq: this.count.toString() };
  }

  override add(tick: Tick, ctx: GrainContext): MessageInit<Summary> {
    this.count++;
    return { count: this.count.toString(), lastSeq: tick.seq, servedBy: ctx.cluster.id };
  }
}

/** What a client that kept the streaming rpc (another generator, an older module) sends. */
class WatchingClient extends TickerClient {
  watch(request: MessageInit<TickRequest>, options: CallOptions): Promise<Tick> {
    return this.$invoke('granary.test.streaming.Ticker/Watch', TickRequest, Tick, request, options);
  }
}

const CALCULATOR = CalculatorGrain.kindName;
/** Deadline of the ordinary calls: generous, since a first call may wait for shard claims. */
const CALL_TIMEOUT_MS = 5_000;
/** Identities tried to find one node-b owns (half of them are, with two members). */
const MAX_CANDIDATES = 1_000;
/** Deadline of the call that must time out (the grain never answers it). */
const SHORT_TIMEOUT_MS = 300;

describe('generated code on a 2-node cluster (end to end)', function () {
  this.timeout(30_000);
  const table = new MemoryClusterTable();
  let a: Cluster;
  let b: Cluster;

  before(async () => {
    const start = async (id: string) =>
      Cluster.start({
        name: 'codegen-e2e',
        id,
        provider: new MemoryProvider(table),
        kinds: [
          calculatorKind(() => new Calculator()),
          pongerKind(() => new Ponger()),
          tickerKind(() => new Ticker()),
        ],
        remote: { host: '127.0.0.1', port: await freePort() },
        shardCount: 16,
      });
    a = await start('node-a');
    b = await start('node-b');
  });

  after(async () => {
    for (const release of sleepers) release();
    await Promise.all([a?.shutdown({ graceful: false }), b?.shutdown({ graceful: false })]);
  });

  /** Waits until node-a sees node-b up (the hash ring then places shards on it). */
  async function nodeBUp(): Promise<void> {
    const up = () => a.topology.members.some((m) => m.id === 'node-b' && m.status === 'up');
    if (up()) return;
    await new Promise<void>((resolve) => {
      const off = a.on('topology', () => {
        if (up()) {
          off();
          resolve();
        }
      });
    });
  }

  /**
   * An identity whose shard node-b owns, so a call from node-a crosses the network; one
   * `prefix` per test, so a grain blocked by one test does not hold up another.
   */
  async function identityOnB(prefix: string, kindName = CALCULATOR): Promise<string> {
    await nodeBUp();
    for (let i = 0; i < MAX_CANDIDATES; i++) {
      const identity = `${prefix}-${i}`;
      if (a.ownerOf(kindName, a.shardOf(kindName, identity))?.id === 'node-b') return identity;
    }
    throw new Error(`no identity among ${MAX_CANDIDATES} candidates is owned by node-b`);
  }

  it('the generated client calls the generated grain on the other node', async () => {
    const identity = await identityOnB('divide');
    const reply = await CalculatorClient.for(a, identity).divide(
      { dividend: '9007199254740993', divisor: '2' },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    expect(reply).to.deep.equal({
      quotient: '4503599627370496',
      remainder: '1',
      servedBy: 'node-b',
    });
  });

  it('the seed Ponger answers a typed Ping', async () => {
    const pong = await PongerClient.for(b, 'ponger-1').ping(
      { cnt: '41' },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    expect(pong).to.deep.equal({ cnt: '42' });
  });

  it('an error thrown in the grain arrives as GrainError with its name, code and message', async () => {
    const identity = await identityOnB('error');
    const err = await CalculatorClient.for(a, identity)
      .divide({ dividend: '1', divisor: '0' }, { timeoutMs: CALL_TIMEOUT_MS, retries: 2 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(GrainError);
    expect(err).to.include({
      code: 'ERR_GRAIN',
      originalName: 'RangeError',
      originalCode: 'ERR_DIVIDE_BY_ZERO',
    });
    expect((err as Error).message).to.contain('cannot divide 1 by zero');
  });

  it('a call that outlives its deadline arrives as DeadlineExceededError', async () => {
    const identity = await identityOnB('sleep');
    const err = await CalculatorClient.for(a, identity)
      .sleep({ ms: 0 }, { timeoutMs: SHORT_TIMEOUT_MS })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeadlineExceededError);
    expect(err).to.have.property('code', 'ERR_DEADLINE_EXCEEDED');
  });

  it('an rpc the grain does not implement arrives as UnimplementedError', async () => {
    const identity = await identityOnB('square');
    const err = await CalculatorClient.for(a, identity)
      .square({ dividend: '3', divisor: '0' }, { timeoutMs: CALL_TIMEOUT_MS })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnimplementedError);
    expect(err).to.have.property('code', 'ERR_UNIMPLEMENTED');
    expect((err as UnimplementedError).method).to.equal('granary.test.e2e.Calculator/Square');
    expect((err as Error).cause).to.be.instanceOf(GrainError);
  });

  it('a plain message sent with cluster.send reaches receiveDefault on the other node', async () => {
    const identity = await identityOnB('plain', PongerGrain.kindName);
    const arrived = new Promise<void>((resolve) => (onPlain = resolve));
    a.send(PongerGrain.kindName, identity, PingMessage.create({ cnt: '18446744073709551615' }));
    await arrived;
    expect(plainReceived).to.deep.equal([{ cnt: '18446744073709551615', member: 'node-b' }]);
  });

  it('a grain calls another grain through the generated client on its context', async () => {
    const identity = await identityOnB('relay');
    const reply = await CalculatorClient.for(a, identity).relay(
      { dividend: '7', divisor: '3' },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    expect(reply.quotient).to.equal('2');
    expect(reply.remainder).to.equal('1');
    const next = `${identity}-next`;
    expect(reply.servedBy).to.equal(a.ownerOf(CALCULATOR, a.shardOf(CALCULATOR, next))?.id);
  });

  it('the generated client of a service with streaming rpcs calls its unary rpcs on the other node', async () => {
    const identity = await identityOnB('ticker', TickerGrain.kindName);
    const ticker = TickerClient.for(a, identity);
    const options = { timeoutMs: CALL_TIMEOUT_MS, idempotent: true };
    expect(await ticker.add({ seq: '7' }, options)).to.deep.equal({
      count: '1',
      lastSeq: '7',
      servedBy: 'node-b',
    });
    expect(await ticker.add({ seq: '18446744073709551615' }, options)).to.include({
      count: '2',
      lastSeq: '18446744073709551615',
    });
    expect(await ticker.now({ channel: 'c' }, options)).to.deep.equal({
      channel: 'c@node-b',
      seq: '2',
    });
  });

  it('a call to one of its streaming rpcs answers UnimplementedError across the nodes', async () => {
    const identity = await identityOnB('watch', TickerGrain.kindName);
    const err = await new WatchingClient(a, TickerGrain.kindName, identity)
      .watch({ channel: 'c' }, { timeoutMs: CALL_TIMEOUT_MS })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnimplementedError);
    expect(err).to.include({ method: 'granary.test.streaming.Ticker/Watch' });
    expect((err as Error).cause).to.be.instanceOf(GrainError);
  });
});
