import { expect } from 'chai';
import { Stop, Terminated, Watch } from '../../src/messages';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { BatchBuilder } from '../../src/remote/internal/batch-builder';
import { encodeSystemMessage, SYSTEM_TYPE_NAME } from '../../src/remote/internal/system-codec';
import { SYSTEM_FORMAT } from '../../src/remote/internal/wire';
import type { OutboundEnvelope } from '../../src/remote/internal/outbound-envelope';
import { EndpointTerminatedEvent } from '../../src/remote/remote-events';
import type { RawLink, TestNode } from './helpers';
import { rawConnect, rawHandshake, startNode, stopNodes, until } from './helpers';

const RAW_ADDRESS = '127.0.0.1:9';

function envelope(fields: Partial<OutboundEnvelope>): OutboundEnvelope {
  const env: OutboundEnvelope = {
    targetId: 'echo',
    typeName: 'json',
    format: 1,
    payload: '"hi"',
    urgent: false,
    message: undefined,
    ...fields,
  };
  if (typeof env.payload === 'string') env.payloadLength = Buffer.byteLength(env.payload);
  return env;
}

function frame(envelopes: OutboundEnvelope[]): Buffer {
  const b = new BatchBuilder();
  for (const e of envelopes) b.add(e);
  return b.take();
}

describe('Remote authorization', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  const raws: RawLink[] = [];
  let b: TestNode;
  let stopped: string[];

  beforeEach(async () => {
    stopped = [];
    b = await startNode({ endpointDownTtlMs: 300 });
    nodes.push(b);
    const watchStops = (id: string): void => {
      const pid = b.system.root.spawnNamed(
        Props.fromFunc((ctx) => {
          if (ctx.sender && typeof ctx.message === 'string') ctx.respond(ctx.message);
        }),
        id,
      );
      void b.system.root.watch(pid).then(() => stopped.push(id));
    };
    watchStops('echo');
    watchStops('$system-like');
  });
  afterEach(async () => {
    for (const r of raws.splice(0)) r.close();
    await stopNodes(nodes);
  });

  async function raw(memberId = 'raw'): Promise<RawLink> {
    const r = rawConnect(b.address);
    raws.push(r);
    const ack = await rawHandshake(r, { address: RAW_ADDRESS, memberId });
    expect(ack.handshakeAck!.accepted).to.equal(true);
    return r;
  }

  it('refuses a remote Stop and PoisonPill of a system actor, and counts them', async () => {
    const r = await raw();
    const stop = encodeSystemMessage(new Stop())!;
    r.send(
      frame([
        envelope({
          targetId: '$system-like',
          typeName: SYSTEM_TYPE_NAME,
          format: SYSTEM_FORMAT,
          payload: stop,
        }),
        envelope({
          targetId: '$remote-activator',
          typeName: SYSTEM_TYPE_NAME,
          format: SYSTEM_FORMAT,
          payload: stop,
        }),
        envelope({
          targetId: '$system-like',
          typeName: 'granary.PoisonPill',
          format: 0,
          payload: new Uint8Array(0),
        }),
      ]),
    );
    await until(() => b.remote.stats.forbiddenMessages === 3, 5000, 'three refusals');
    expect(stopped).to.deep.equal([]);
    expect(b.system.registry.getLocal('$remote-activator')).to.not.equal(undefined);
    // A user actor can still be stopped from another node.
    r.send(
      frame([
        envelope({
          targetId: 'echo',
          typeName: SYSTEM_TYPE_NAME,
          format: SYSTEM_FORMAT,
          payload: stop,
        }),
      ]),
    );
    await until(() => stopped.includes('echo'), 5000, 'echo to stop');
  });

  it('refuses a Watch naming a watcher at another address: nothing is sent there', async () => {
    const r = await raw();
    const watch = encodeSystemMessage(new Watch(new PID('127.0.0.1:1', 'spy')))!;
    r.send(
      frame([envelope({ typeName: SYSTEM_TYPE_NAME, format: SYSTEM_FORMAT, payload: watch })]),
    );
    await until(() => b.remote.stats.forbiddenMessages === 1, 5000, 'the refusal');
    b.system.root.stop(new PID(b.address, 'echo'));
    await until(() => stopped.includes('echo'), 5000, 'echo to stop');
    await new Promise((res) => setTimeout(res, 100));
    expect(b.remote.stats.unreachableEndpoints).to.equal(0);
  });

  it('replies to a sender address it may not dial over the link the request came on', async () => {
    const r = await raw();
    const downs: string[] = [];
    b.system.eventStream.subscribe(EndpointTerminatedEvent, (e) => downs.push(e.address));
    const senders = Array.from(
      { length: 2000 },
      (_, i) => new PID(`10.255.${i >> 8}.${i & 255}:7`, `f$${i}`),
    );
    for (let i = 0; i < senders.length; i += 250) {
      r.send(frame(senders.slice(i, i + 250).map((sender) => envelope({ sender }))));
    }
    await until(
      () =>
        r.frames.filter((f) => f.batch).reduce((n, f) => n + f.batch!.envelopes.length, 0) === 2000,
      10_000,
      '2,000 replies over the link',
    );
    const replies = r.frames.filter((f) => f.batch).flatMap((f) => f.batch!.targetIds);
    expect(new Set(replies).size).to.equal(2000);
    expect(b.remote.stats.unreachableEndpoints).to.equal(0);
    expect(downs).to.deep.equal([]);
  });

  it('does not dial back a peer that dialled it and left', async () => {
    const a = await startNode();
    nodes.push(a);
    expect(
      await a.system.root.request(new PID(b.address, 'echo'), 'x', { timeoutMs: 5000 }),
    ).to.equal('x');
    const down = new Promise<void>((res) =>
      b.system.eventStream.subscribe(EndpointTerminatedEvent, () => res()),
    );
    await a.remote.shutdown();
    await down;
    await new Promise((res) => setTimeout(res, 500));
    expect(b.remote.stats.unreachableEndpoints).to.equal(0);
    // Its endpoint went idle, and was removed after endpointDownTtlMs.
    await until(() => b.remote.stats.removedEndpoints === 1, 5000, 'the endpoint to be removed');
  });

  it('fails a send at once when maxEndpoints are in use and none is down', async () => {
    const c = await startNode({ maxEndpoints: 1 });
    const d = await startNode();
    nodes.push(c, d);
    d.system.root.spawnNamed(
      Props.fromFunc((ctx) => ctx.respond(ctx.message)),
      'echo',
    );
    expect(
      await c.system.root.request(new PID(b.address, 'echo'), 'one', { timeoutMs: 5000 }),
    ).to.equal('one');
    let error: unknown;
    try {
      await c.system.root.request(new PID(d.address, 'echo'), 'two', { timeoutMs: 5000 });
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.contain('(maxEndpoints)');
  });

  it('refuses a Terminated the peer sends for an actor of another node', async () => {
    const r = await raw();
    const t = encodeSystemMessage(new Terminated(new PID('127.0.0.1:1', 'x'), 'stopped'))!;
    r.send(frame([envelope({ typeName: SYSTEM_TYPE_NAME, format: SYSTEM_FORMAT, payload: t })]));
    await until(() => b.remote.stats.forbiddenMessages === 1, 5000, 'the refusal');
  });

  it('counts system messages that do not decode, logging one line for a frame of 500', async () => {
    const r = await raw();
    const garbage = envelope({
      typeName: SYSTEM_TYPE_NAME,
      format: SYSTEM_FORMAT,
      payload: Buffer.from([0xff, 0xff, 0xff]),
    });
    r.send(frame(Array.from({ length: 500 }, () => garbage)));
    await until(() => b.remote.stats.forbiddenMessages === 500, 5000, 'every refusal counted');
    const lines = b.logs.filter((l) => /system message/.test(l.msg));
    expect(lines.map((l) => l.msg)).to.deep.equal([
      'remote system message refused: it does not decode',
    ]);
    expect(stopped).to.deep.equal([]);
  });
});
