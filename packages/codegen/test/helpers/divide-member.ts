import { Cluster, MemoryClusterTable, MemoryProvider } from '@granary/cluster';
import { CalculatorGrain, calculatorKind } from '../golden/e2e/calculator.granary';
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
