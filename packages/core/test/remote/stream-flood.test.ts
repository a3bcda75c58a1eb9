import * as http2 from 'node:http2';
import { expect } from 'chai';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { CONNECT_METHOD, encodeFrame } from '../../src/remote/internal/wire';
import type { TestNode } from './helpers';
import { helloFrame, startNode, stopNodes } from './helpers';

const SECRET = 'stream-flood-secret-0123456789abcdef';
/** Streams the attacker tries on its one connection (each waits for the node's challenge). */
const ATTEMPTS = 200;
/** The node's limits.maxStreamsPerConnection (its default). */
const BOUND = 16;

/** `frame` as one gRPC message (the 5-byte prefix, uncompressed). */
function grpcMessage(frame: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(frame.byteLength, 1);
  return Buffer.concat([prefix, frame]);
}

/**
 * Opens a Connect stream on `session`, sends a hello and resolves true once the node answered
 * (its challenge: it accepted the stream and ran a handshake step), false if the stream or the
 * session ended first. The stream is reset either way, as an HTTP/2 "rapid reset" client does.
 */
function helloThenReset(session: http2.ClientHttp2Session): Promise<boolean> {
  return new Promise((resolve) => {
    if (session.closed || session.destroyed) return resolve(false);
    let req: http2.ClientHttp2Stream;
    try {
      req = session.request({
        ':method': 'POST',
        ':path': CONNECT_METHOD,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
    } catch {
      return resolve(false);
    }
    req.on('error', () => resolve(false));
    req.on('close', () => resolve(false));
    req.once('data', () => {
      resolve(true);
      req.close(http2.constants.NGHTTP2_CANCEL);
    });
    req.write(grpcMessage(encodeFrame(helloFrame({ address: '127.0.0.1:9', memberId: 'x' }))));
  });
}

// Each stream a peer starts costs the node a call, a link and a handshake step, and a stream it
// resets at once frees its place under HTTP/2's bound on concurrent streams. One connection
// started thousands a second, without the secret, until its connection was closed.
describe('Remote: streams started on one connection without authenticating', function () {
  this.timeout(30_000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  it('closes the connection past limits.maxStreamsPerConnection of them, and serves members', async () => {
    const a = await startNode({ secret: SECRET });
    const b = await startNode({ secret: SECRET });
    nodes.push(a, b);
    a.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (typeof ctx.message === 'string') ctx.respond(ctx.message);
      }),
      'echo',
    );
    const session = http2.connect(`http://${a.address}`);
    session.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => session.on('close', resolve));
    let answered = 0;
    for (let i = 0; i < ATTEMPTS; i++) {
      if (!(await helloThenReset(session))) break;
      answered++;
    }
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
    session.destroy();
    expect(answered, 'streams the node ran a handshake step for').to.be.at.most(BOUND);
    expect(a.remote.stats.limitExceeded).to.equal(1);
    // A member dials a connection per link: it is served as before.
    const reply = await b.system.root.request(new PID(a.address, 'echo'), 'hi', {
      timeoutMs: 10_000,
    });
    expect(reply).to.equal('hi');
  });
});
