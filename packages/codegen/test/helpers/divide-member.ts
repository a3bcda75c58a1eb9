import * as grpc from '@grpc/grpc-js';
import { Cluster, MemoryClusterTable, MemoryProvider } from '@granary/cluster';
import {
  CalculatorGrain,
  DivideRequest as DivideRequestCodec,
  calculatorKind,
} from '../golden/e2e/calculator.granary';
import type { DivideReply, DivideRequest } from '../golden/e2e/calculator.granary';

/** The gRPC path of Calculator's Divide, as a gateway serves it. */
export const DIVIDE = `/${CalculatorGrain.kindName}/Divide`;

/** Divides, and nothing else: what the gateway attack tests call through. */
class Divider extends CalculatorGrain {
  override divide(req: DivideRequest): DivideReply {
    return {
      quotient: String(BigInt(req.dividend) / BigInt(req.divisor)),
      remainder: '0',
      servedBy: '',
    };
  }
}

/** A one-member in-memory cluster hosting the Calculator kind, for a gateway to serve. */
export function startDivideMember(name: string, id: string): Promise<Cluster> {
  return Cluster.start({
    name,
    id,
    provider: new MemoryProvider(new MemoryClusterTable()),
    kinds: [calculatorKind(() => new Divider())],
    remote: { host: '127.0.0.1', port: 0 },
    shardCount: 4,
  });
}

/** A unary Divide of grain `identity` through grpc-js on `client` (it connects at its first call). */
export function divide(client: grpc.Client, identity = 'legit'): Promise<Buffer> {
  const md = new grpc.Metadata();
  md.set('granary-identity', identity);
  return new Promise<Buffer>((resolve, reject) =>
    client.makeUnaryRequest(
      DIVIDE,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(DivideRequestCodec.encode({ dividend: '9', divisor: '3' })),
      md,
      { deadline: Date.now() + 5000 },
      (err, res) => (err ? reject(err) : resolve(res!)),
    ),
  );
}
