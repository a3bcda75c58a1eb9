import * as http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { CONNECT_METHOD, encodeFrame } from '../../src/remote/internal/wire';
import type { TestNode } from './helpers';
import { helloFrame, startNode, stopNodes } from './helpers';

const echo = Props.fromFunc((ctx) => {
  if (ctx.sender) ctx.respond(ctx.message);
});

/** A gRPC message with the compressed flag set. */
function compressed(body: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = 1;
  prefix.writeUInt32BE(body.byteLength, 1);
  return Buffer.concat([prefix, body]);
}

interface Outcome {
  grpcStatus: number | undefined;
  message: string;
}

/** One raw Connect stream with `grpc-encoding: gzip` carrying `messages`; its status. */
function compressedStream(address: string, messages: Buffer[]): Promise<Outcome> {
  const session = http2.connect(`http://${address}`);
  session.on('error', () => undefined);
  return new Promise((resolve) => {
    const out: Outcome = { grpcStatus: undefined, message: '' };
    const req = session.request({
      ':method': 'POST',
      ':path': CONNECT_METHOD,
      'content-type': 'application/grpc',
      'grpc-encoding': 'gzip',
      te: 'trailers',
    });
    const seen = (h: http2.IncomingHttpHeaders): void => {
      if (h['grpc-status'] === undefined) return;
      out.grpcStatus = Number(h['grpc-status']);
      out.message = decodeURIComponent(String(h['grpc-message'] ?? ''));
      session.destroy();
      resolve(out);
    };
    req.on('response', seen);
    req.on('trailers', seen);
    req.on('error', () => undefined);
    req.on('close', () => resolve(out));
    req.write(Buffer.concat(messages));
  });
}

describe('Remote: compressed messages', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  afterEach(() => stopNodes(nodes));

  it('refuses a stream that says its messages are gzip, before inflating any, and members still get in', async () => {
    const b = await startNode({ secret: 'compression-test-secret-0123456789' });
    const a = await startNode({ secret: 'compression-test-secret-0123456789' });
    nodes.push(b, a);
    b.system.root.spawnNamed(echo, 'echo');
    // Each inflates to 1 MiB (the frame limit) from about 1 KiB: the amplification refused.
    const bomb = compressed(
      gzipSync(encodeFrame(helloFrame({ clusterName: 'x'.repeat((1 << 20) - 1024) }))),
    );
    expect(bomb.byteLength).to.be.below(4096);
    const outcome = await compressedStream(b.address, [bomb, bomb, bomb]);
    expect(outcome.grpcStatus).to.equal(grpc.status.UNIMPLEMENTED);
    expect(outcome.message).to.contain(
      "compressed messages are not accepted (grpc-encoding 'gzip')",
    );
    expect(b.remote.stats.corruptFrames).to.equal(1);
    expect(b.remote.stats.limitExceeded).to.equal(0);
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'in', { timeoutMs: 5000 }),
    ).to.equal('in');
  });
});
