import { expect } from 'chai';
import { RemoteBackpressureError } from '../../src/errors';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import type { RawServer, TestNode } from './helpers';
import { rejectionOf, startNode, startRawServer, stopNodes } from './helpers';

const echo = Props.fromFunc((ctx) => {
  if (ctx.sender) ctx.respond(ctx.message);
});

describe('Remote large messages', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  let server: RawServer | undefined;
  afterEach(async () => {
    server?.close();
    server = undefined;
    await stopNodes(nodes);
  });

  async function pair(options: object = {}): Promise<[TestNode, TestNode]> {
    const a = await startNode(options);
    const b = await startNode(options);
    nodes.push(a, b);
    b.system.root.spawnNamed(echo, 'echo');
    return [a, b];
  }

  it('answers a small call issued after a large one first: the small one does not wait behind it', async () => {
    const [a, b] = await pair({ largeMessageBytes: 16 * 1024 });
    const order: string[] = [];
    const large = a.system.root
      .request(new PID(b.address, 'echo'), Buffer.alloc(4 * 1024 * 1024 - 1024, 7), {
        timeoutMs: 20_000,
      })
      .then((r) => {
        order.push('large');
        return r as Uint8Array;
      });
    const small = a.system.root
      .request(new PID(b.address, 'echo'), 'small', { timeoutMs: 20_000 })
      .then(() => order.push('small'));
    const [reply] = await Promise.all([large, small]);
    expect(order).to.deep.equal(['small', 'large']);
    expect(reply.byteLength).to.equal(4 * 1024 * 1024 - 1024);
    expect(reply.every((x) => x === 7)).to.equal(true);
  });

  it('delivers every byte of large messages in flight together both ways (chunk memory is reused)', async () => {
    const [a, b] = await pair({ largeMessageBytes: 16 * 1024 });
    const pattern = (k: number, n: number): Buffer => {
      const m = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i++) m[i] = (i * 31 + k * 17 + (i >>> 8)) & 255;
      return m;
    };
    const sent = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => pattern(k, 200 * 1024 + k * 1000));
    const replies = await Promise.all(
      sent.map((m) =>
        a.system.root.request<Uint8Array>(new PID(b.address, 'echo'), m, { timeoutMs: 20_000 }),
      ),
    );
    replies.forEach((reply, k) => {
      expect(Buffer.from(reply).equals(sent[k]!), `message ${k} came back byte for byte`).to.equal(
        true,
      );
    });
  });

  it('keeps the order of messages from one sender to one target, whatever their sizes', async () => {
    const [a, b] = await pair({ largeMessageBytes: 4096 });
    const seen: string[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    b.system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        const m = ctx.message;
        if (m instanceof Uint8Array) seen.push(`L${m[0]}`);
        else if (typeof m === 'number') seen.push(`s${m}`);
        if (seen.length === 9) done();
      }),
      'recorder',
    );
    const target = new PID(b.address, 'recorder');
    const sent = ['s0', 'L1', 's2', 's3', 'L4', 'L5', 's6', 'L7', 's8'];
    for (const m of sent) {
      const n = Number(m.slice(1));
      a.system.root.send(target, m.startsWith('L') ? Buffer.alloc(100_000, n) : n);
    }
    await all;
    expect(seen).to.deep.equal(sent);
  });

  it('fails a large message that finds no room in time with RemoteBackpressureError', async () => {
    // A peer that authenticates and then reads nothing: the chunks of the first large message
    // stop moving, and the ones behind it wait out their deadline.
    server = await startRawServer((call) => call.pause());
    const a = await startNode({
      largeMessageBytes: 16 * 1024,
      maxMessageBytes: 1024 * 1024,
      maxLargeBytesInFlight: 1024 * 1024,
      writeStallTimeoutMs: 60_000,
    });
    nodes.push(a);
    const target = new PID(server.address, 'x');
    const calls = Array.from({ length: 4 }, () =>
      a.system.root.request(target, Buffer.alloc(900 * 1024), { timeoutMs: 600 }),
    );
    for (const c of calls) c.catch(() => undefined);
    const errors = await Promise.all(calls.map((c) => rejectionOf(c)));
    const refused = errors.filter((e) => e instanceof RemoteBackpressureError);
    expect(refused.length).to.be.at.least(1);
    expect(refused[0]!.message).to.contain('(maxLargeBytesInFlight)');
    expect(a.remote.stats.backpressureRejections).to.equal(refused.length);
  });

  it('moves a message of maxMessageBytes, and refuses one over it at the sender', async () => {
    const [a, b] = await pair({ maxMessageBytes: 2 * 1024 * 1024 });
    const big = Buffer.alloc(2 * 1024 * 1024, 3);
    const reply = (await a.system.root.request(new PID(b.address, 'echo'), big, {
      timeoutMs: 20_000,
    })) as Uint8Array;
    expect(reply.byteLength).to.equal(big.byteLength);
    const err = await rejectionOf(
      a.system.root.request(new PID(b.address, 'echo'), Buffer.alloc(big.byteLength + 1), {
        timeoutMs: 5000,
      }),
    );
    expect(err.message).to.contain('(maxMessageBytes)');
  });
});
