import * as grpc from '@grpc/grpc-js';
import { recordingLogger, type RecordedLine } from '@granary/testkit';
import { ActorSystem } from '../../src/actor-system';
import { Remote } from '../../src/remote/remote';
import type { RemoteOptions } from '../../src/remote/remote-options';
import { newNonce, proofOf } from '../../src/remote/internal/handshake-proof';
import { decodeCredit } from '../../src/remote/internal/link-frames';
import {
  CONNECT_METHOD,
  PROTOCOL_VERSION,
  decodeFrame,
  encodeFrame,
} from '../../src/remote/internal/wire';
import type { WireFrame, WireHandshake } from '../../src/remote/internal/wire';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Class<T> = abstract new (...args: any[]) => T;

/** An ActorSystem with a started Remote on a free loopback port. */
export interface TestNode {
  system: ActorSystem;
  remote: Remote;
  address: string;
  logs: RecordedLine[];
}

/** Starts a node; `stopNodes` shuts them down in the test's `afterEach`. */
export async function startNode(options: RemoteOptions = {}): Promise<TestNode> {
  const { logger, lines: logs } = recordingLogger();
  const system = new ActorSystem({ logger });
  const remote = new Remote(system);
  const address = await remote.start({ host: '127.0.0.1', port: 0, ...options });
  return { system, remote, address, logs };
}

/** Graceful shutdown of every node (remote first, then the system). */
export async function stopNodes(nodes: TestNode[]): Promise<void> {
  await Promise.all(
    nodes.map(async (n) => {
      await n.remote.shutdown();
      await n.system.shutdown();
    }),
  );
  nodes.length = 0;
}

/** Resolves with the first event of `type` (matching `predicate`) published on the system. */
export function nextEvent<T>(
  system: ActorSystem,
  type: Class<T>,
  predicate: (e: T) => boolean = () => true,
): Promise<T> {
  return new Promise((resolve) => {
    const sub = system.eventStream.subscribe(type, (e: T) => {
      if (!predicate(e)) return;
      sub.unsubscribe();
      resolve(e);
    });
  });
}

/** The error a promise rejects with (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the promise to reject');
}

/** A raw Connect stream, for speaking (or breaking) the protocol by hand. */
export interface RawLink {
  stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  /** Every frame received so far. */
  frames: WireFrame[];
  /** The stream's final status. */
  ended: Promise<grpc.StatusObject>;
  send(frame: WireFrame | Buffer): void;
  /** The next frame not returned by an earlier `next` (rejects if the stream ends first). */
  next(): Promise<WireFrame>;
  close(): void;
}

/** Opens a raw Connect stream to `address`. */
export function rawConnect(
  address: string,
  credentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
): RawLink {
  const client = new grpc.Client(address, credentials, {
    'grpc.use_local_subchannel_pool': 1,
    ...options,
  });
  const id = (b: Buffer): Buffer => b;
  const stream = client.makeBidiStreamRequest(CONNECT_METHOD, id, id);
  const frames: WireFrame[] = [];
  let read = 0;
  let waiter: (() => void) | undefined;
  let done = false;
  stream.on('data', (b: Buffer) => {
    if (decodeCredit(b) !== undefined) return; // the node crediting what it read
    frames.push(decodeFrame(b));
    waiter?.();
  });
  stream.on('error', () => undefined);
  const ended = new Promise<grpc.StatusObject>((resolve) =>
    stream.on('status', (s: grpc.StatusObject) => {
      done = true;
      waiter?.();
      resolve(s);
    }),
  );
  const next = async (): Promise<WireFrame> => {
    while (read >= frames.length) {
      if (done) throw new Error('the stream ended before the next frame');
      await new Promise<void>((resolve) => (waiter = resolve));
    }
    return frames[read++]!;
  };
  return {
    stream,
    frames,
    ended,
    next,
    send: (frame) => stream.write(Buffer.isBuffer(frame) ? frame : encodeFrame(frame)),
    close: () => {
      stream.cancel();
      client.close();
    },
  };
}

/** A client hello as a node would send it (override any field). */
export function helloFrame(fields: Partial<WireHandshake> = {}): WireFrame {
  return {
    handshake: {
      clusterName: 'granary',
      memberId: fields.address ?? '127.0.0.1:9',
      address: '127.0.0.1:9',
      protocolVersion: PROTOCOL_VERSION,
      nonce: newNonce(),
      ...fields,
    },
  };
}

/**
 * Runs the whole client handshake by hand on a raw link (hello, challenge, proof) and resolves
 * with the server's final frame (its ack, accepted or not).
 */
export async function rawHandshake(
  raw: RawLink,
  fields: Partial<WireHandshake> = {},
  secret?: string,
): Promise<WireFrame> {
  const hello = helloFrame(fields);
  raw.send(hello);
  const challenge = await raw.next();
  if (!challenge.challenge) return challenge;
  const hs = hello.handshake!;
  const proof = proofOf(secret, 'client', {
    clusterName: hs.clusterName,
    clientNonce: hs.nonce,
    serverNonce: challenge.challenge.nonce,
    clientMemberId: hs.memberId,
    clientAddress: hs.address,
    serverMemberId: challenge.challenge.memberId,
    serverAddress: challenge.challenge.address,
  });
  raw.send({ proof: { proof } });
  return raw.next();
}

/** A hand-written Connect server that accepts any client (no secret), for peers that misbehave. */
export interface RawServer {
  address: string;
  /** Server calls whose handshake completed, in order. */
  calls: Array<grpc.ServerDuplexStream<Buffer, Buffer>>;
  /** Frames received after the handshake, per call. */
  frames: WireFrame[][];
  close(): void;
}

/**
 * Starts a RawServer on loopback. `afterHandshake` runs on each call once it accepted the
 * client's proof (e.g. to stop reading: `call.pause()`).
 */
export async function startRawServer(
  afterHandshake: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void = () => undefined,
): Promise<RawServer> {
  const server = new grpc.Server();
  const id = (b: Buffer): Buffer => b;
  const raw: RawServer = {
    address: '',
    calls: [],
    frames: [],
    close: () => server.forceShutdown(),
  };
  server.addService(
    {
      Connect: {
        path: CONNECT_METHOD,
        requestStream: true,
        responseStream: true,
        requestSerialize: id,
        requestDeserialize: id,
        responseSerialize: id,
        responseDeserialize: id,
      },
    },
    {
      Connect: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        let step = 0;
        const frames: WireFrame[] = [];
        call.on('error', () => undefined);
        call.on('data', (b: Buffer) => {
          if (decodeCredit(b) !== undefined) return;
          const frame = decodeFrame(b);
          if (step === 0) {
            step = 1;
            call.write(
              encodeFrame({
                challenge: { nonce: newNonce(), memberId: 'raw-server', address: raw.address },
              }),
            );
          } else if (step === 1) {
            step = 2;
            call.write(
              encodeFrame({
                handshakeAck: {
                  accepted: true,
                  reason: '',
                  refusal: '',
                  memberId: 'raw-server',
                  address: raw.address,
                  proof: new Uint8Array(0),
                },
              }),
            );
            raw.calls.push(call);
            raw.frames.push(frames);
            afterHandshake(call);
          } else frames.push(frame);
        });
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  raw.address = `127.0.0.1:${port}`;
  return raw;
}

/** Resolves when `predicate` holds, checking every 10 ms; rejects after `timeoutMs`. */
export async function until(
  predicate: () => boolean,
  timeoutMs = 10_000,
  what = 'the condition',
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
