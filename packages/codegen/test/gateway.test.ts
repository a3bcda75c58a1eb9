import { join } from 'node:path';
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Cluster, MemoryClusterTable, MemoryProvider } from '@granary/cluster';
import type { GrainContext } from '@granary/cluster';
import { freePort } from '@granary/testkit';
import { InvalidOptionError } from '@granary/core';
import { ERROR_CODE_TRAILER, GrpcGateway, type GrpcGatewayOptions } from '../src/gateway';
import { CalculatorGrain, calculatorKind } from './golden/e2e/calculator.granary';
import type { DivideReply, DivideRequest, SleepRequest } from './golden/e2e/calculator.granary';
import type { Empty } from '../src/runtime';
import { PROTOS_DIR } from './helpers/paths';

const sleepers = new Set<() => void>();

class Calculator extends CalculatorGrain {
  override divide(req: DivideRequest, ctx: GrainContext): DivideReply {
    if (BigInt(req.divisor) === 0n) {
      throw Object.assign(new RangeError('cannot divide by zero'), { code: 'ERR_DIVIDE_BY_ZERO' });
    }
    return {
      quotient: (BigInt(req.dividend) / BigInt(req.divisor)).toString(),
      remainder: (BigInt(req.dividend) % BigInt(req.divisor)).toString(),
      servedBy: `${ctx.cluster.id}/${ctx.identity}`,
    };
  }
  override async sleep(_req: SleepRequest): Promise<Empty> {
    await new Promise<void>((resolve) => sleepers.add(resolve));
    return {};
  }
}

interface Reply {
  quotient: string;
  remainder: string;
  servedBy: string;
}
type Unary = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: Reply) => void,
) => grpc.ClientUnaryCall;

/** A plain grpc-js client made from the .proto alone, as any other language would. */
function plainClient(port: number): grpc.Client & Record<string, Unary> {
  const definition = protoLoader.loadSync(join(PROTOS_DIR, 'e2e', 'calculator.proto'), {
    longs: String,
    defaults: true,
    includeDirs: [PROTOS_DIR],
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    granary: { test: { e2e: { Calculator: grpc.ServiceClientConstructor } } };
  };
  const Ctor = pkg.granary.test.e2e.Calculator;
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as never;
}

function call(
  client: Record<string, Unary>,
  method: string,
  req: object,
  identity: string | undefined,
  deadlineMs = 5000,
): Promise<Reply> {
  const md = new grpc.Metadata();
  if (identity !== undefined) md.set('granary-identity', identity);
  return new Promise((resolve, reject) => {
    client[method]!(req, md, { deadline: Date.now() + deadlineMs }, (err, res) =>
      err ? reject(err) : resolve(res!),
    );
  });
}

describe('GrpcGateway: generated kinds as standard gRPC services', function () {
  this.timeout(30_000);
  const table = new MemoryClusterTable();
  let a: Cluster;
  let b: Cluster;
  let gateway: GrpcGateway;
  let client: grpc.Client & Record<string, Unary>;

  before(async () => {
    const start = async (id: string): Promise<Cluster> =>
      Cluster.start({
        name: 'gateway-test',
        id,
        provider: new MemoryProvider(table),
        kinds: [calculatorKind(() => new Calculator())],
        remote: { host: '127.0.0.1', port: await freePort() },
        shardCount: 8,
      });
    a = await start('gw-a');
    b = await start('gw-b');
    gateway = await GrpcGateway.start({ cluster: a, services: [CalculatorGrain.kindName] });
    client = plainClient(gateway.port);
  });

  after(async () => {
    for (const release of sleepers) release();
    client?.close();
    await gateway?.close();
    await Promise.all([a?.shutdown({ graceful: false }), b?.shutdown({ graceful: false })]);
  });

  it('serves package.Service/Method to a grpc-js client that loaded only the .proto; the identity header names the grain', async () => {
    const served = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const reply = await call(
        client,
        'Divide',
        { dividend: '9007199254740993', divisor: '2' },
        `c${i}`,
      );
      expect(reply.quotient).to.equal('4503599627370496');
      expect(reply.remainder).to.equal('1');
      expect(reply.servedBy.endsWith(`/c${i}`)).to.equal(true);
      served.add(reply.servedBy.split('/')[0]!);
    }
    // Calls reach the owner wherever it is: both members served some.
    expect([...served].sort()).to.deep.equal(['gw-a', 'gw-b']);
  });

  it('maps an error the grain threw to UNKNOWN with the Granary code in the details and a trailer', async () => {
    const err = (await call(client, 'Divide', { dividend: '1', divisor: '0' }, 'z').catch(
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.UNKNOWN);
    expect(err.details)
      .to.match(/^\[ERR_GRAIN\] /)
      .and.to.contain('cannot divide by zero');
    expect(err.metadata.get(ERROR_CODE_TRAILER)).to.deep.equal(['ERR_GRAIN']);
    expect(err.metadata.get('granary-error-original-code')).to.deep.equal(['ERR_DIVIDE_BY_ZERO']);
  });

  it('an rpc the grain does not implement is UNIMPLEMENTED', async () => {
    const err = (await call(client, 'Square', { dividend: '1' }, 's').catch(
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.UNIMPLEMENTED);
  });

  it('takes the deadline from grpc-timeout: DEADLINE_EXCEEDED', async () => {
    const started = Date.now();
    const err = (await call(client, 'Sleep', { ms: 0 }, 'sleepy', 300).catch(
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).to.be.lessThan(2000);
  });

  it('a call without the identity header is INVALID_ARGUMENT naming the header', async () => {
    const err = (await call(client, 'Divide', { dividend: '1', divisor: '1' }, undefined).catch(
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.contain('granary-identity');
  });

  it('refuses to listen beyond loopback in plaintext, and an unknown service, naming the option', async () => {
    const insecure = await GrpcGateway.start({ cluster: a, host: '0.0.0.0' }).catch((e) => e);
    expect(insecure).to.have.property('option', 'credentials');
    const unknown = await GrpcGateway.start({ cluster: a, services: ['no.Such'] }).catch((e) => e);
    expect(unknown).to.have.property('option', 'services');
  });

  it('refuses an option it does not know, naming the one likely meant', async () => {
    // From JavaScript or a config object: { prot } listened on a free port instead of 50051.
    const options = { cluster: a, prot: 50051 } as unknown as GrpcGatewayOptions;
    const err = await GrpcGateway.start(options).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidOptionError).and.have.property('option', 'prot');
    expect((err as Error).message).to.contain("'port'");
  });
});
