import { expect } from 'chai';
import {
  DeadLetterEvent,
  MailboxFullError,
  PID,
  Props,
  SerializationFormat,
  Started,
  serialization,
  type ActorSystem,
  type Context,
} from '../../src/index';
import { entryMessage, entrySender, type Entry, type Process } from '../../src/internal';
import { BatchBuilder } from '../../src/remote/internal/batch-builder';
import { EventLog } from '../../src/remote/internal/event-log';
import { deliverBatch } from '../../src/remote/internal/inbound-delivery';
import type { RemoteState } from '../../src/remote/internal/remote-state';
import { WatchTable } from '../../src/remote/internal/watch-table';
import { decodeFrame } from '../../src/remote/internal/wire';
import type { WireBatch } from '../../src/remote/internal/wire-types';
import { DEFAULT_REMOTE_LIMITS } from '../../src/remote/remote-limits';
import { testSystem, ticks } from '../support';

/** The peer the frames come from, and an actor of it that sends them. */
const PEER = '10.0.0.9:4000';
const PEER_ACTOR = new PID(PEER, '$7');

interface Outgoing {
  target: string;
  message: unknown;
  sender?: PID;
  header?: Record<string, string>;
  deadline?: number;
  typeName?: string;
  format?: SerializationFormat;
}

/** One decoded batch frame, as the transport hands it to deliverBatch. */
function frameOf(envelopes: Outgoing[]): WireBatch {
  const builder = new BatchBuilder();
  for (const e of envelopes) {
    const wire = serialization.serializeForWire(e.message);
    builder.add({
      targetId: e.target,
      typeName: e.typeName ?? wire.typeName,
      format: e.format ?? wire.format,
      payload: wire.text ?? wire.bytes!,
      payloadLength:
        wire.text === undefined ? wire.bytes!.byteLength : Buffer.byteLength(wire.text),
      sender: e.sender,
      header: e.header,
      urgent: false,
      deadline: e.deadline,
      message: e.message,
    });
  }
  return decodeFrame(builder.take()).batch!;
}

function stateOf(system: ActorSystem): RemoteState {
  return {
    registry: system.registry,
    deadLetters: system.deadLetters,
    eventStream: system.eventStream,
    logger: system.logger,
    serialization,
    maxMessageBytes: 1 << 20,
    limits: DEFAULT_REMOTE_LIMITS,
    watches: new WatchTable(),
    address: system.address,
    events: new EventLog(system.logger, 1000),
    clock: system.clock,
    expired: system.expired,
  };
}

function deadLetters(system: ActorSystem): DeadLetterEvent[] {
  const seen: DeadLetterEvent[] = [];
  system.eventStream.subscribe(DeadLetterEvent, (e) => seen.push(e));
  return seen;
}

describe('deliverBatch (remote inbound delivery)', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = testSystem();
  });
  afterEach(() => system.shutdown());

  it('hands each envelope to its local target with sender, headers and deadline', async () => {
    const seen: unknown[] = [];
    system.root.spawnNamed(
      Props.fromFunc((ctx: Context) => {
        if (ctx.message instanceof Started) return;
        seen.push([ctx.message, ctx.sender?.toString(), ctx.headers, ctx.deadline]);
      }),
      'echo',
    );
    const receivedAt = Date.now();
    const batch = frameOf([
      { target: 'echo', message: { n: 1 } },
      {
        target: 'echo',
        message: { n: 2 },
        sender: PEER_ACTOR,
        header: { trace: 't' },
        deadline: receivedAt + 5_000,
      },
    ]);
    deliverBatch(stateOf(system), batch, PEER, receivedAt);
    await ticks(2);
    expect(seen).to.have.length(2);
    expect(seen[0]).to.deep.equal([{ n: 1 }, undefined, {}, undefined]);
    const [message, sender, headers, deadline] = seen[1] as [unknown, string, object, number];
    expect([message, sender, headers]).to.deep.equal([
      { n: 2 },
      PEER_ACTOR.toString(),
      { trace: 't' },
    ]);
    // Sent as the time left (rounded up), counted again from the frame's arrival.
    expect(deadline).to.be.within(receivedAt + 4_999, receivedAt + 5_000);
  });

  it('drops a request whose deadline passed while its frame waited, before decoding it', async () => {
    const letters = deadLetters(system);
    const seen: unknown[] = [];
    system.root.spawnNamed(
      Props.fromFunc((ctx: Context) => {
        if (!(ctx.message instanceof Started)) seen.push(ctx.message);
      }),
      'echo',
    );
    const now = Date.now();
    const batch = frameOf([
      { target: 'echo', message: 'expired', sender: PEER_ACTOR, deadline: now + 100 },
      { target: 'echo', message: 'in time', sender: PEER_ACTOR, deadline: now + 1000 },
      // An undecodable payload: dropped unread, so no dead letter for it either.
      {
        target: 'echo',
        message: new Uint8Array([1]),
        typeName: 'app.Unknown',
        format: SerializationFormat.Protobuf,
        deadline: now + 100,
      },
    ]);
    // The frame arrived 500 ms ago: 100 ms left then is long gone, 1000 ms is not.
    deliverBatch(stateOf(system), batch, PEER, now - 500);
    await ticks(2);
    expect(seen).to.deep.equal(['in time']);
    expect(letters).to.deep.equal([]);
    expect(system.expired.onArrival).to.equal(2);
  });

  it('completes a local request when the reply names its future', async () => {
    let asked: Entry | undefined;
    const blackHole: Process = {
      post: (_pid, entry) => ((asked = entry), true),
      sendSystemMessage: () => {},
      stop: () => {},
    };
    system.registry.addAddressResolver((pid) => (pid.address === PEER ? blackHole : undefined));
    const pending = system.root.request(new PID(PEER, 'ponger'), 'ping');
    expect(entryMessage(asked!)).to.equal('ping');
    const future = entrySender(asked!)!;
    deliverBatch(stateOf(system), frameOf([{ target: future.id, message: 'pong' }]), PEER, 0);
    expect(await pending).to.equal('pong');
  });

  it('dead-letters what a full mailbox refuses as mailbox-full, with MailboxFullError', () => {
    const letters = deadLetters(system);
    system.root.spawnNamed(
      Props.fromFunc(() => {}, { mailbox: { capacity: 1 } }),
      'small',
    );
    const batch = frameOf(
      [1, 2, 3].map((n) => ({ target: 'small', message: n, sender: PEER_ACTOR })),
    );
    deliverBatch(stateOf(system), batch, PEER, Date.now());
    // The first is queued (the actor runs later); the others find the one slot taken.
    expect(letters.map((l) => [l.message, l.reason, l.sender?.toString()])).to.deep.equal([
      [2, 'mailbox-full', PEER_ACTOR.toString()],
      [3, 'mailbox-full', PEER_ACTOR.toString()],
    ]);
  });

  it('rejects a local future sender at once when the target mailbox is full', async () => {
    system.root.spawnNamed(
      Props.fromFunc(() => {}, { mailbox: { capacity: 1 } }),
      'small',
    );
    system.root.send(new PID(system.address, 'small'), 'fill');
    // A request from this node whose message came back through the wire (as forward does).
    let asked: Entry | undefined;
    system.registry.addAddressResolver(() => ({
      post: (_pid, entry) => ((asked = entry), true),
      sendSystemMessage: () => {},
      stop: () => {},
    }));
    const pending = system.root.request(new PID(PEER, 'relay'), 'job').catch((e: unknown) => e);
    const future = entrySender(asked!)!;
    deliverBatch(
      stateOf(system),
      frameOf([{ target: 'small', message: 'job', sender: future }]),
      PEER,
      0,
    );
    expect(await pending).to.be.instanceOf(MailboxFullError);
  });

  it('dead-letters a message to a missing target as not-found', () => {
    const letters = deadLetters(system);
    deliverBatch(stateOf(system), frameOf([{ target: 'nobody', message: 'hi' }]), PEER, 0);
    expect(letters.map((l) => [l.pid.id, l.message, l.reason])).to.deep.equal([
      ['nobody', 'hi', 'not-found'],
    ]);
  });

  it('dead-letters a payload of an unknown type with its type name, and goes on', async () => {
    const letters = deadLetters(system);
    const seen: unknown[] = [];
    system.root.spawnNamed(
      Props.fromFunc((ctx) => {
        if (!(ctx.message instanceof Started)) seen.push(ctx.message);
      }),
      'echo',
    );
    const batch = frameOf([
      {
        target: 'echo',
        message: new Uint8Array([1, 2]),
        typeName: 'app.Unknown',
        format: SerializationFormat.Protobuf,
      },
      { target: 'echo', message: 'after' },
    ]);
    deliverBatch(stateOf(system), batch, PEER, 0);
    await ticks(2);
    expect(letters).to.have.length(1);
    expect(letters[0]!.reason).to.equal('unknown-type');
    expect((letters[0]!.message as { typeName: string }).typeName).to.equal('app.Unknown');
    expect(seen).to.deep.equal(['after']);
  });

  it('hands a prefix route the PID the frame names', () => {
    const ids: string[] = [];
    system.registry.addPrefix('$g/k/', {
      post: (pid) => ids.push(pid.id) > 0,
      sendSystemMessage: () => {},
      stop: () => {},
    });
    const batch = frameOf([
      { target: '$g/k/a', message: 1 },
      { target: '$g/k/b', message: 2 },
    ]);
    deliverBatch(stateOf(system), batch, PEER, 0);
    expect(ids).to.deep.equal(['$g/k/a', '$g/k/b']);
  });
});
