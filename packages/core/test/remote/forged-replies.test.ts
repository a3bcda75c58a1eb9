import { expect } from 'chai';
import { DeadLetterEvent } from '../../src/dead-letters';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { BatchBuilder } from '../../src/remote/internal/batch-builder';
import type { OutboundEnvelope } from '../../src/remote/internal/outbound-envelope';
import type { RawLink, TestNode } from './helpers';
import { rawConnect, rawHandshake, startNode, stopNodes, until } from './helpers';

const SECRET = 'forged-replies-secret-0123456789abcdef';
/** Requests A keeps pending at B while the attacker sprays. */
const PENDING = 20;
/** Ids the attacker tries in one frame. */
const GUESSES = 2000;

/** One frame of JSON "forged" replies to `targetIds`. */
function replies(targetIds: string[]): Buffer {
  const b = new BatchBuilder();
  for (const targetId of targetIds) {
    const env: OutboundEnvelope = {
      targetId,
      typeName: 'json',
      format: 1,
      payload: '"forged"',
      payloadLength: 8,
      urgent: false,
      message: undefined,
    };
    b.add(env);
  }
  return b.take();
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The two characters a future id names table slot `slot` with. */
const slotChars = (slot: number): string => BASE64URL[slot >> 6]! + BASE64URL[slot & 63]!;

/** The outcome of a request: its reply, or its error's message. */
const outcome = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    (v) => v,
    (e: Error) => `error: ${e.message}`,
  );

// A peer that authenticated (it holds the cluster's secret, as every GranaryClient does) may
// send to any id on a node. Futures were `f$<n>`: sending replies to f$1..f$N settled the
// node's pending requests to other nodes, grain calls among them, with the attacker's answers.
describe('Remote request futures: replies from a peer that was not asked', function () {
  this.timeout(30000);
  const nodes: TestNode[] = [];
  const raws: RawLink[] = [];
  let a: TestNode;
  let release: () => void;
  let notFound: string[];

  beforeEach(async () => {
    a = await startNode({ secret: SECRET });
    const b = await startNode({ secret: SECRET });
    nodes.push(a, b);
    const gate = new Promise<void>((resolve) => (release = resolve));
    b.system.root.spawnNamed(
      Props.fromFunc(async (ctx) => {
        if (typeof ctx.message !== 'string') return;
        await gate;
        ctx.respond(`real answer to ${ctx.message}`);
      }),
      'slow',
    );
    notFound = [];
    a.system.eventStream.subscribe(DeadLetterEvent, (e: DeadLetterEvent) => {
      if (e.reason === 'not-found' && e.message === 'forged') notFound.push(e.pid.id);
    });
  });
  afterEach(async () => {
    release();
    for (const r of raws.splice(0)) r.close();
    await stopNodes(nodes);
  });

  async function attacker(): Promise<RawLink> {
    const r = rawConnect(a.address);
    raws.push(r);
    const ack = await rawHandshake(r, { address: '127.0.0.1:9', memberId: 'attacker' }, SECRET);
    expect(ack.handshakeAck!.accepted).to.equal(true);
    return r;
  }

  function pendingAtB(): Array<Promise<unknown>> {
    const slow = new PID(nodes[1]!.address, 'slow');
    return Array.from({ length: PENDING }, (_, i) =>
      outcome(a.system.root.request(slow, `q${i}`, { timeoutMs: 20_000 })),
    );
  }

  it('settles no pending request: guessed sequence numbers are dead letters', async () => {
    const calls = pendingAtB();
    const r = await attacker();
    // The old form (f$<n>) and ids of the current shape with a made-up token, slot by slot.
    const guesses = Array.from({ length: GUESSES }, (_, i) =>
      i % 2 === 0 ? `f$${i + 1}` : `f$${slotChars(i)}AAAAAAAA`,
    );
    r.send(replies(guesses));
    // One frame is delivered in one turn: once some are dead letters, all were handled.
    await until(() => notFound.length > 0, 10_000, 'the forged replies to arrive');
    release();
    const answers = await Promise.all(calls);
    expect(answers).to.deep.equal(calls.map((_, i) => `real answer to q${i}`));
    expect(notFound.length).to.equal(GUESSES);
  });

  it('answers the request it was sent, and only that one: one id does not give the others', async () => {
    const calls = pendingAtB();
    const r = await attacker();
    // A request to the attacker goes over its link: it learns that future's id.
    const asked = outcome(
      a.system.root.request(new PID('127.0.0.1:9', 'x'), 'q', { timeoutMs: 20_000 }),
    );
    const frame = await r.next();
    const env = frame.batch!.envelopes[0]!;
    const id = env.senderId;
    expect(id.startsWith('f$')).to.equal(true);
    // The others are in other slots: the attacker tries every slot with the token it saw,
    // and its own slot with that token one character off.
    expect(id).to.have.length(12);
    const token = id.slice(4);
    const guesses: string[] = [];
    for (let slot = 0; slot < 4096; slot++) {
      if (slotChars(slot) !== id.slice(2, 4)) guesses.push(`f$${slotChars(slot)}${token}`);
    }
    for (let i = 4; i < 12; i++) {
      guesses.push(id.slice(0, i) + (id[i] === 'A' ? 'B' : 'A') + id.slice(i + 1));
    }
    // In frames under the link's envelope limit, the real id last.
    const all = [...guesses, id];
    for (let i = 0; i < all.length; i += GUESSES) r.send(replies(all.slice(i, i + GUESSES)));
    expect(await asked).to.equal('forged');
    release();
    const answers = await Promise.all(calls);
    expect(answers).to.deep.equal(calls.map((_, i) => `real answer to q${i}`));
    expect(notFound.length).to.equal(guesses.length);
  });
});
