/**
 * The benchmark side of the remote benchmarks: starts the peer process, a local Granary node,
 * and raw grpc-js clients for the baselines.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ActorSystem, Remote, silentLogger } from '@granary/core';
import { Ping, RAW_ECHO_STREAM, RAW_ONE_WAY, RAW_UNARY, RawBatch } from './messages';

const id = (b: Buffer): Buffer => b;

/** Both processes and the clients a benchmark case needs. */
export interface RemotePair {
  peer: ChildProcess;
  system: ActorSystem;
  remote: Remote;
  /** The peer's Granary address. */
  granary: string;
  /** The peer's raw gRPC address. */
  raw: string;
  rawClient: grpc.Client;
  close(): Promise<void>;
}

/** Forks the peer, starts the local node; resolves once both are ready. */
export async function startPair(): Promise<RemotePair> {
  const peer = fork(path.join(__dirname, 'peer.js'), [], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const addresses = await new Promise<{ granary: string; raw: string }>((resolve, reject) => {
    let out = '';
    peer.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n'))
        resolve(JSON.parse(out.split('\n')[0]!) as { granary: string; raw: string });
    });
    peer.once('exit', (code) => reject(new Error(`benchmark peer exited (${code})`)));
  });
  const system = new ActorSystem({ logger: silentLogger });
  const remote = new Remote(system);
  await remote.start({ host: '127.0.0.1', port: 0 });
  const rawClient = new grpc.Client(addresses.raw, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
  });
  return {
    peer,
    system,
    remote,
    ...addresses,
    rawClient,
    close: async () => {
      rawClient.close();
      await system.shutdown();
      peer.kill('SIGKILL');
    },
  };
}

/** Lets I/O run between bursts of sends, as a busy node's event loop would. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Raw baseline: `count` Pings over one bidi stream in RawBatch messages of `batch`; msgs/s. */
export async function rawOneWay(
  client: grpc.Client,
  count: number,
  batch: number,
  burst: number,
): Promise<number> {
  const stream = client.makeBidiStreamRequest(RAW_ONE_WAY, id, id);
  const counted = new Promise<number>((resolve) =>
    stream.once('data', (b: Buffer) => resolve(Number(b.toString()))),
  );
  const start = process.hrtime.bigint();
  let items: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    items.push(Ping.encode(Ping.create({ n: i, text: 'hello' })).finish());
    if (items.length === batch) {
      stream.write(Buffer.from(RawBatch.encode({ items }).finish()));
      items = [];
    }
    if (i % burst === burst - 1) await nextTurn();
  }
  if (items.length > 0) stream.write(Buffer.from(RawBatch.encode({ items }).finish()));
  stream.write(Buffer.from(RawBatch.encode({ items: [] }).finish()));
  const received = await counted;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  stream.end();
  if (received !== count) throw new Error(`raw peer counted ${received} of ${count}`);
  return count / seconds;
}

/** Raw baseline: one echo at a time over a bidi stream; returns per-call latencies in µs. */
export async function rawStreamLatencies(client: grpc.Client, count: number): Promise<number[]> {
  const stream = client.makeBidiStreamRequest(RAW_ECHO_STREAM, id, id);
  const latencies: number[] = [];
  let waiter: (() => void) | undefined;
  stream.on('data', () => waiter?.());
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await new Promise<void>((resolve) => {
      waiter = resolve;
      stream.write(Buffer.from(Ping.encode(Ping.create({ n: i, text: 'hello' })).finish()));
    });
    latencies.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  stream.end();
  return latencies;
}

/** One raw unary echo call. */
export function rawUnary(client: grpc.Client, n: number): Promise<void> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      RAW_UNARY,
      id,
      id,
      Buffer.from(Ping.encode(Ping.create({ n, text: 'hello' })).finish()),
      (err) => (err ? reject(err) : resolve()),
    ),
  );
}
