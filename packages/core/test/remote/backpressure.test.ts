import { expect } from 'chai';
import { EndpointUnavailableError, PeerNotReadingError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import type { RawServer, TestNode } from './helpers';
import {
  rawConnect,
  rawHandshake,
  rejectionOf,
  startNode,
  startRawServer,
  stopNodes,
  until,
} from './helpers';
import { BatchBuilder } from '../../src/remote/internal/batch-builder';

/** The first error of class `type` in the cause chain of `err`. */
function causeOf<T extends Error>(err: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let e = err as Error | undefined; e !== undefined; e = e.cause as Error | undefined) {
    if (e instanceof type) return e;
  }
  return undefined;
}

describe('Remote outbound backpressure', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  let server: RawServer | undefined;
  afterEach(async () => {
    server?.close();
    server = undefined;
    await stopNodes(nodes);
  });

  it('closes the link of a peer that stops reading past maxOutboundBytes; waiting requests fail naming it', async () => {
    // The peer completes the handshake, then takes nothing more: HTTP/2 flow control holds
    // what the node writes, which piles up in the node's link.
    server = await startRawServer((call) => call.pause());
    const a = await startNode({ maxOutboundBytes: 256 * 1024, largeMessageBytes: 8192 });
    nodes.push(a);
    const requests: Array<Promise<unknown>> = [];
    for (let i = 0; i < 200; i++) {
      const p = a.system.root.request(new PID(server.address, 'x'), Buffer.alloc(4096, i), {
        timeoutMs: 20_000,
      });
      p.catch(() => undefined);
      requests.push(p);
    }
    const err = await rejectionOf(requests[0]!);
    expect(err).to.be.instanceOf(EndpointUnavailableError);
    const cause = causeOf(err, PeerNotReadingError);
    expect(cause).to.be.instanceOf(PeerNotReadingError);
    expect(cause?.limit).to.equal('maxOutboundBytes');
    expect(err.message).to.contain('(maxOutboundBytes)');
    expect(a.remote.stats.peersNotReading).to.equal(1);
    expect(
      a.logs.filter((l) => l.msg === 'remote peer is not reading; its link is closed'),
    ).to.have.length(1);
  });

  it('closes the link of a peer whose stream stays full for writeStallTimeoutMs', async () => {
    server = await startRawServer((call) => call.pause());
    const a = await startNode({ writeStallTimeoutMs: 300, largeMessageBytes: 8192 });
    nodes.push(a);
    const sends: Array<Promise<unknown>> = [];
    for (let i = 0; i < 400; i++) {
      const p = a.system.root.request(new PID(server.address, 'x'), Buffer.alloc(4096), {
        timeoutMs: 20_000,
      });
      p.catch(() => undefined);
      sends.push(p);
    }
    const err = await rejectionOf(sends[0]!);
    expect(err.message).to.contain('(writeStallTimeoutMs)');
    expect(causeOf(err, PeerNotReadingError)?.limit).to.equal('writeStallTimeoutMs');
  });

  it('closes the inbound link of a peer that sends requests and never reads the replies', async () => {
    const b = await startNode({ maxOutboundBytes: 256 * 1024 });
    nodes.push(b);
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (ctx.sender) ctx.respond(ctx.message);
      }),
      'echo',
    );
    const raw = rawConnect(b.address);
    const ack = await rawHandshake(raw, { address: '127.0.0.1:9', memberId: 'greedy' });
    expect(ack.handshakeAck!.accepted).to.equal(true);
    raw.stream.pause(); // read nothing more
    const builder = new BatchBuilder();
    const payload = Buffer.alloc(8000, 1);
    let sent = 0;
    while (!raw.stream.destroyed && sent < 400) {
      for (let i = 0; i < 16; i++) {
        builder.add({
          targetId: 'echo',
          typeName: 'bytes',
          format: 0,
          payload,
          sender: new PID('127.0.0.1:9', `f$${++sent}`),
          urgent: false,
          message: undefined,
        });
      }
      raw.send(builder.take());
      await new Promise((r) => setTimeout(r, 2));
      if (b.remote.stats.peersNotReading > 0) break;
    }
    await until(
      () => b.remote.stats.peersNotReading === 1,
      10_000,
      'the slow reader to be dropped',
    );
    raw.close();
  });
});
