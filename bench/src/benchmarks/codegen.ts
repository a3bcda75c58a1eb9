import type { Type } from 'protobufjs';
import type { CallOptions, InvokeContext, MessageCodec } from '@granary/codegen/runtime';
import {
  GrainBase,
  GrainClient,
  defineProtoFile,
  defineService,
  method,
  unimplemented,
} from '@granary/codegen/runtime';
import type { ClusterLike } from '@granary/codegen/runtime';
import { defineBenchmark } from '../harness';

/** Encode+decode pairs per codec repetition: enough for ~100 ms per case. */
const CODEC_ROUNDS = 100_000;
/** Sequential rpc round trips per repetition. */
const CALLS = 100_000;

// The shape of test/protos/shop/orders.proto's Order.Line (+ Money), as the generator embeds it.
const DESCRIPTOR = {
  bench: {
    nested: {
      Money: {
        edition: 'proto3',
        fields: { currency: { type: 'int32', id: 1 }, amountMinor: { type: 'int64', id: 2 } },
      },
      Line: {
        edition: 'proto3',
        fields: {
          sku: { type: 'string', id: 1 },
          quantity: { type: 'uint32', id: 2 },
          unitPrice: { type: '.bench.Money', id: 3 },
          tags: { rule: 'repeated', type: 'string', id: 4 },
        },
      },
    },
  },
};
interface Line {
  sku: string;
  quantity: number;
  unitPrice?: { currency: number; amountMinor: string };
  tags: string[];
}

const types: Type[] = [];
const file = defineProtoFile(
  { registerType: (t) => types.push(t) },
  'bench/line.proto',
  DESCRIPTOR,
);
const Line: MessageCodec<Line> = file.codec('bench.Line');
const LINE: Line = {
  sku: 'SKU-123456',
  quantity: 3,
  unitPrice: { currency: 1, amountMinor: '1999' },
  tags: ['a', 'bb', 'ccc'],
};

const Service = defineService<LineGrain, InvokeContext>('bench.Lines', [
  method('bench.Lines/Echo', Line, Line, (g, req, ctx) => g.echo(req, ctx)),
]);
abstract class LineGrain extends GrainBase<InvokeContext> {
  protected readonly $service = Service;
  echo(_req: Line, _ctx: InvokeContext): Promise<Line> | Line {
    return unimplemented('bench.Lines/Echo');
  }
}
class EchoLines extends LineGrain {
  override echo(req: Line): Line {
    return req;
  }
}
class LineClient extends GrainClient {
  echo(req: Line, options?: CallOptions): Promise<Line> {
    return this.$invoke('bench.Lines/Echo', Line, Line, req, options);
  }
}

/** Delivers straight to one grain in-process: isolates the cost of the generated rpc layer. */
function loopback(grain: LineGrain): ClusterLike {
  return {
    async request<T>(_kind: string, _id: string, message: unknown): Promise<T> {
      let reply: unknown;
      await grain.receive({ message, respond: (m) => (reply = m) });
      return reply as T;
    },
    send(_kind: string, _id: string, message: unknown): void {
      void grain.receive({ message, respond: () => {} });
    },
  };
}

function perSecond(count: number, start: bigint): number {
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

export const benchmark = defineBenchmark({
  name: 'codegen',
  description:
    'generated codecs (plain objects, 64-bit as strings) vs raw protobufjs, and the rpc layer ' +
    '(encode, GrainInvoke, dispatch, decode) vs calling the grain method directly',
  cases: [
    {
      id: 'protobufjs-encode-decode',
      metric: 'pairs_per_s',
      run: async () => {
        const type = types.find((t) => t.fullName === '.bench.Line')!;
        const start = process.hrtime.bigint();
        for (let i = 0; i < CODEC_ROUNDS; i++) type.decode(type.encode(LINE).finish());
        return perSecond(CODEC_ROUNDS, start);
      },
    },
    {
      id: 'generated-codec-encode-decode',
      metric: 'pairs_per_s',
      baseline: 'protobufjs-encode-decode',
      run: async () => {
        const start = process.hrtime.bigint();
        for (let i = 0; i < CODEC_ROUNDS; i++) Line.decode(Line.encode(LINE));
        return perSecond(CODEC_ROUNDS, start);
      },
    },
    {
      id: 'direct-method-call',
      metric: 'calls_per_s',
      run: async () => {
        const grain = new EchoLines();
        const start = process.hrtime.bigint();
        for (let i = 0; i < CALLS; i++) await grain.echo(LINE);
        return perSecond(CALLS, start);
      },
    },
    {
      id: 'generated-rpc-loopback',
      metric: 'calls_per_s',
      baseline: 'direct-method-call',
      run: async () => {
        const client = new LineClient(loopback(new EchoLines()), 'bench.Lines', 'l1');
        const start = process.hrtime.bigint();
        for (let i = 0; i < CALLS; i++) await client.echo(LINE);
        return perSecond(CALLS, start);
      },
    },
  ],
});
