/**
 * The other process of the remote benchmarks: a Granary node (actors `sink` and `echo`) and a
 * raw @grpc/grpc-js server doing the same work (baseline), both on loopback. Prints one JSON
 * line `{ granary, raw }` (addresses) when ready; exits when the parent disconnects.
 */
import * as grpc from '@grpc/grpc-js';
import { ActorSystem, Props, Remote, silentLogger } from '@granary/core';
import { Ping, RAW_ECHO_STREAM, RAW_ONE_WAY, RAW_UNARY, RawBatch } from './messages';

const id = (b: Buffer): Buffer => b;

/** Counts Pings; answers 'count' requests with the number received so far. */
function sinkProps(): Props {
  let received = 0;
  return Props.fromFunc((ctx) => {
    const m = ctx.message as { n?: number } | string;
    if (m === 'count') ctx.respond(received);
    else if (typeof m === 'object' && m !== null && typeof m.n === 'number') received++;
  });
}

function rawServer(): grpc.Server {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': -1 });
  const method = (
    path: string,
    requestStream: boolean,
    responseStream: boolean,
  ): grpc.MethodDefinition<Buffer, Buffer> => ({
    path,
    requestStream,
    responseStream,
    requestSerialize: id,
    requestDeserialize: id,
    responseSerialize: id,
    responseDeserialize: id,
  });
  server.addService(
    {
      OneWay: method(RAW_ONE_WAY, true, true),
      EchoStream: method(RAW_ECHO_STREAM, true, true),
      Unary: method(RAW_UNARY, false, false),
    },
    {
      // Each message is a RawBatch of encoded Pings, decoded one by one as a receiver would;
      // an empty batch asks for the count so far.
      OneWay: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        let received = 0;
        call.on('data', (bytes: Buffer) => {
          const batch = RawBatch.decode(bytes) as unknown as { items: Uint8Array[] };
          if (batch.items.length === 0) call.write(Buffer.from(String(received)));
          for (const item of batch.items)
            if (typeof (Ping.decode(item) as unknown as { n: number }).n === 'number') received++;
        });
        call.on('end', () => call.end());
      },
      EchoStream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        call.on('data', (bytes: Buffer) =>
          call.write(Ping.encode(Ping.decode(bytes)).finish() as Buffer),
        );
        call.on('end', () => call.end());
      },
      Unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        callback(null, Buffer.from(Ping.encode(Ping.decode(call.request)).finish()));
      },
    },
  );
  return server;
}

async function main(): Promise<void> {
  const system = new ActorSystem({ logger: silentLogger });
  const remote = new Remote(system);
  const granary = await remote.start({ host: '127.0.0.1', port: 0 });
  system.root.spawnNamed(sinkProps(), 'sink');
  system.root.spawnNamed(
    Props.fromFunc((ctx) => {
      if (ctx.sender) ctx.respond(ctx.message);
    }),
    'echo',
  );
  const server = rawServer();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  process.on('disconnect', () => process.exit(0));
  process.stdout.write(`${JSON.stringify({ granary, raw: `127.0.0.1:${port}` })}\n`);
}

void main();
