import type * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import {
  channelOptions,
  LINK_WINDOW_BYTES,
  serverOptions,
  setCallWindow,
} from '../../src/remote/internal/grpc-options';
import { DEFAULT_REMOTE_LIMITS } from '../../src/remote/remote-limits';

const METHOD = '/test.Window/Connect';
const identity = (b: Buffer): Buffer => b;
/** HTTP/2's default window, the one a link had before it raised it. */
const DEFAULT_WINDOW = 65_535;

/** The HTTP/2 session under a grpc-js server call (where setCallWindow reaches it). */
function sessionOf(call: grpc.ServerDuplexStream<Buffer, Buffer>): http2.Http2Session {
  return (call as unknown as { call: { stream: { session: http2.Http2Session } } }).call.stream
    .session;
}

/** Waits until `check` holds, polling each 10 ms; fails naming `what` after 10 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  const giveUp = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > giveUp) throw new Error(`${what}: not within 10 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Link HTTP/2 windows', () => {
  let server: grpc.Server;
  let client: grpc.Client;
  let calls: Array<grpc.ServerDuplexStream<Buffer, Buffer>>;

  beforeEach(async () => {
    calls = [];
    server = new grpc.Server(serverOptions(DEFAULT_REMOTE_LIMITS));
    server.addService(
      {
        Connect: {
          path: METHOD,
          requestStream: true,
          responseStream: true,
          requestSerialize: identity,
          requestDeserialize: identity,
          responseSerialize: identity,
          responseDeserialize: identity,
        },
      },
      { Connect: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => calls.push(call) },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    client = new grpc.Client(
      `127.0.0.1:${port}`,
      grpc.credentials.createInsecure(),
      channelOptions(DEFAULT_REMOTE_LIMITS, undefined),
    );
  });

  afterEach(() => {
    client.close();
    server.forceShutdown();
  });

  it('an accepted call keeps the default window until setCallWindow raises it to LINK_WINDOW_BYTES; a dialled connection has it from the start', async () => {
    const stream = client.makeBidiStreamRequest(METHOD, identity, identity);
    stream.on('error', () => undefined);
    stream.write(Buffer.from('hello'));
    await until('the server saw the call', () => calls.length === 1);
    const call = calls[0]!;
    const session = sessionOf(call);
    expect(session.state.effectiveLocalWindowSize, 'server window before authentication').to.equal(
      DEFAULT_WINDOW,
    );
    // The client raised its connection window (grpc-node.flow_control_window): the server may
    // send that much before the client reads.
    await until(
      `the client's connection window reaches ${LINK_WINDOW_BYTES} (server sees ${session.state.remoteWindowSize})`,
      () => (session.state.remoteWindowSize ?? 0) >= LINK_WINDOW_BYTES - 64 * 1024,
    );

    expect(setCallWindow(call, LINK_WINDOW_BYTES), 'grpc-js internals as expected').to.equal(true);
    expect(session.state.effectiveLocalWindowSize, 'server connection window').to.equal(
      LINK_WINDOW_BYTES,
    );
    await until('the server settings (initial stream window) are acknowledged', () => {
      return session.localSettings.initialWindowSize === LINK_WINDOW_BYTES;
    });
    stream.cancel();
  });
});
