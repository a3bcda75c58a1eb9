import { join } from 'node:path';
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { Cluster, GranaryClient, MemoryClusterTable, MemoryProvider } from '@granary/cluster';
import type { GrainContext } from '@granary/cluster';
import { freePort, silentLogger, waitUntil } from '@granary/testkit';
import { GrpcGateway } from '../src/gateway';
import { CalculatorGrain, calculatorKind } from './golden/e2e/calculator.granary';
import type { DivideReply, DivideRequest } from './golden/e2e/calculator.granary';
import { PROTOS_DIR } from './helpers/paths';

const SECRET = 'gateway-trace-secret-0123456789';
/** SpanKind.SERVER and CLIENT of @opentelemetry/api. */
const SERVER = 1;
const CLIENT = 2;
const DIVIDE = 'granary.test.e2e.Calculator/Divide';

class Calculator extends CalculatorGrain {
  override divide(req: DivideRequest, ctx: GrainContext): DivideReply {
    return { quotient: req.dividend, remainder: '0', servedBy: ctx.cluster.id };
  }
}

type Unary = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: unknown) => void,
) => grpc.ClientUnaryCall;

/** A plain grpc-js client made from the .proto alone, as any other language would. */
function plainClient(port: number): grpc.Client & { Divide: Unary } {
  const definition = protoLoader.loadSync(join(PROTOS_DIR, 'e2e', 'calculator.proto'), {
    longs: String,
    defaults: true,
    includeDirs: [PROTOS_DIR],
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    granary: { test: { e2e: { Calculator: grpc.ServiceClientConstructor } } };
  };
  return new pkg.granary.test.e2e.Calculator(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  ) as never;
}

function divide(client: { Divide: Unary }, identity: string, md: grpc.Metadata): Promise<unknown> {
  md.set('granary-identity', identity);
  return new Promise((resolve, reject) => {
    client.Divide({ dividend: '7', divisor: '1' }, md, { deadline: Date.now() + 10_000 }, (e, r) =>
      e ? reject(e) : resolve(r),
    );
  });
}

/** A random W3C trace id or span id of `bytes` bytes (never all zero). */
function randomId(bytes: number): string {
  let id = '';
  for (let i = 0; i < bytes; i++)
    id += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0');
  return id.replace(/^00/, '01');
}

/** Waits (bounded) until `spans` holds a span that `match` accepts; fails listing what it has. */
async function spanWhere(
  spans: InMemorySpanExporter,
  what: string,
  match: (s: ReadableSpan) => boolean,
): Promise<ReadableSpan> {
  const until = Date.now() + 15_000;
  for (;;) {
    const found = spans.getFinishedSpans().find(match);
    if (found !== undefined) return found;
    if (Date.now() > until) {
      const seen = spans
        .getFinishedSpans()
        .map((s) => `${s.name} kind=${s.kind} trace=${s.spanContext().traceId}`);
      throw new Error(`no ${what} within 15 s; finished spans: ${seen.join('; ') || 'none'}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('GrpcGateway: a call joins the trace of the gRPC caller (W3C traceparent in metadata)', function () {
  this.timeout(60_000);
  const table = new MemoryClusterTable();
  const spans = new InMemorySpanExporter();
  // Not registered globally: no context manager, so the trace can only travel explicitly.
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  let members: Cluster[] = [];
  let granaryClient: GranaryClient | undefined;
  const gateways: GrpcGateway[] = [];
  let clients: grpc.Client[] = [];

  before(async () => {
    members = [];
    for (const id of ['gt-a', 'gt-b']) {
      members.push(
        await Cluster.start({
          name: 'gateway-trace',
          id,
          provider: new MemoryProvider(table),
          kinds: [calculatorKind(() => new Calculator())],
          remote: { host: '127.0.0.1', port: await freePort(), secret: SECRET },
          shardCount: 8,
          logger: silentLogger,
          telemetry: { tracerProvider },
        }),
      );
    }
    // The calls below must reach grains on both members: wait for the hand-over of shards.
    const [a, b] = members as [Cluster, Cluster];
    const kindName = CalculatorGrain.kindName;
    await waitUntil(
      () =>
        a.topology.members.length === 2 &&
        a.heldShards(kindName).length > 0 &&
        b.heldShards(kindName).length > 0 &&
        a.heldShards(kindName).length + b.heldShards(kindName).length === 8,
      'both members hold shards of the kind and the gateway member sees both',
      {
        on: [
          (l) => a.on('shard-acquired', l),
          (l) => b.on('shard-acquired', l),
          (l) => a.on('topology', l),
        ],
        timeoutMs: 20_000,
      },
    );
  });

  after(async () => {
    for (const c of clients) c.close();
    for (const g of gateways) await g.close();
    await granaryClient?.close();
    await Promise.all(members.map((m) => m.shutdown({ graceful: false })));
    await tracerProvider.shutdown();
  });

  async function gatewayOver(cluster: Cluster | GranaryClient): Promise<{ Divide: Unary }> {
    const gateway = await GrpcGateway.start({ cluster, services: [CalculatorGrain.kindName] });
    gateways.push(gateway);
    const client = plainClient(gateway.port);
    clients = [...clients, client];
    return client;
  }

  it('over a traced member: the call span is a child of the caller span, the grain turn a child of the call span, for grains on either member', async () => {
    const client = await gatewayOver(members[0]!);
    const owners = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const traceId = randomId(16);
      const parentId = randomId(8);
      const md = new grpc.Metadata();
      md.set('traceparent', `00-${traceId}-${parentId}-01`);
      const reply = (await divide(client, `m${i}`, md)) as { servedBy: string };
      owners.add(reply.servedBy);
      const call = await spanWhere(
        spans,
        `CLIENT span ${DIVIDE} in trace ${traceId}`,
        (s) => s.kind === CLIENT && s.spanContext().traceId === traceId,
      );
      expect(call.name).to.equal(DIVIDE);
      expect(
        call.parentSpanContext?.spanId,
        'the call span names the gRPC caller span as parent',
      ).to.equal(parentId);
      const turn = await spanWhere(
        spans,
        `SERVER span (the grain turn) in trace ${traceId}`,
        (s) => s.kind === SERVER && s.spanContext().traceId === traceId,
      );
      expect(turn.parentSpanContext?.spanId, 'the turn is a child of the call span').to.equal(
        call.spanContext().spanId,
      );
      expect(turn.attributes['granary.grain.key']).to.equal(`m${i}`);
    }
    // Grains of both members were called: the trace crossed the wire too.
    expect([...owners].sort(), 'members that served the 16 calls').to.deep.equal(['gt-a', 'gt-b']);
  });

  it('over a GranaryClient (no telemetry of its own): the grain turn is a child of the caller span', async () => {
    granaryClient = await GranaryClient.connect({
      name: 'gateway-trace',
      gateways: [members[0]!.address],
      secret: SECRET,
    });
    const client = await gatewayOver(granaryClient);
    const traceId = randomId(16);
    const parentId = randomId(8);
    const md = new grpc.Metadata();
    md.set('traceparent', `00-${traceId}-${parentId}-01`);
    await divide(client, 'through-client', md);
    const turn = await spanWhere(
      spans,
      `SERVER span (the grain turn) in trace ${traceId}`,
      (s) => s.kind === SERVER && s.spanContext().traceId === traceId,
    );
    expect(turn.parentSpanContext?.spanId).to.equal(parentId);
    expect(turn.attributes['granary.grain.key']).to.equal('through-client');
  });

  it('a call without traceparent starts a trace of its own; a malformed one is ignored', async () => {
    const client = await gatewayOver(members[0]!);
    const before = new Set(spans.getFinishedSpans().map((s) => s.spanContext().traceId));
    const md = new grpc.Metadata();
    md.set('traceparent', 'not-a-traceparent');
    await divide(client, 'untraced', md);
    const call = await spanWhere(
      spans,
      'CLIENT span of the call without a valid traceparent',
      (s) => s.kind === CLIENT && !before.has(s.spanContext().traceId) && s.name === DIVIDE,
    );
    expect(call.parentSpanContext, 'a root span: no parent').to.equal(undefined);
  });
});
