import { expect } from 'chai';
import { DeadLetterEvent, MailboxFullError, Props, type ActorSystem } from '../src/index';
import { deferred, testSystem } from './support';

describe('bounded mailbox (mailbox.capacity)', () => {
  let system: ActorSystem;
  let gate: { promise: Promise<void>; resolve: () => void };
  let drained: { promise: Promise<void>; resolve: () => void };
  let received: unknown[];
  beforeEach(() => {
    system = testSystem();
    gate = deferred();
    drained = deferred();
    received = [];
  });
  afterEach(() => {
    gate.resolve();
    return system.shutdown();
  });

  /** An actor blocked in an async turn, with room for `capacity` queued messages. */
  async function fullActor(capacity: number) {
    const started = deferred();
    const pid = system.root.spawn(
      Props.fromFunc(
        async (ctx) => {
          if (ctx.message === 'block') {
            started.resolve();
            await gate.promise;
          } else if (typeof ctx.message === 'number') {
            received.push(ctx.message);
            if (received.length === capacity) drained.resolve();
          }
        },
        { mailbox: { capacity } },
      ),
    );
    system.root.send(pid, 'block');
    await started.promise;
    for (let i = 0; i < capacity; i++) system.root.send(pid, i);
    return pid;
  }

  it('send dead-letters the message with reason mailbox-full and counts it', async () => {
    const pid = await fullActor(3);
    const events: DeadLetterEvent[] = [];
    system.eventStream.subscribe(DeadLetterEvent, (e) => events.push(e));
    system.root.send(pid, 99);
    expect(events).to.have.length(1);
    expect(events[0]!.reason).to.equal('mailbox-full');
    expect(events[0]!.message).to.equal(99);
    expect(system.deadLetters.byReason.get('mailbox-full')).to.equal(1);
  });

  it('trySend returns false and enqueues nothing', async () => {
    const pid = await fullActor(2);
    expect(system.root.trySend(pid, 99)).to.equal(false);
    gate.resolve();
    await drained.promise;
    expect(received).to.deep.equal([0, 1]);
  });

  it('request rejects at once with MailboxFullError naming the option', async () => {
    const pid = await fullActor(2);
    const err = (await system.root
      .request(pid, 99, { timeoutMs: 60_000 })
      .catch((e: unknown) => e)) as MailboxFullError;
    expect(err).to.be.instanceOf(MailboxFullError);
    expect(err.code).to.equal('ERR_MAILBOX_FULL');
    expect(err.message).to.contain('mailbox.capacity');
    expect(err.capacity).to.equal(2);
  });

  it('accepts again once the actor has drained', async () => {
    const pid = await fullActor(1);
    expect(system.root.trySend(pid, 5)).to.equal(false);
    gate.resolve();
    await drained.promise;
    expect(system.root.trySend(pid, 6)).to.equal(true);
  });
});
