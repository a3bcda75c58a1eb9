import { expect } from 'chai';
import { DeadLetterEvent, EventStream, PID, type ActorSystem } from '../src/index';
import { testSystem } from './support';

describe('EventStream', () => {
  class Ping {
    constructor(readonly n: number) {}
  }

  it('delivers by class and by predicate, and stops after unsubscribe', () => {
    const stream = new EventStream();
    const byClass: number[] = [];
    const byPredicate: unknown[] = [];
    const sub = stream.subscribe(Ping, (p) => byClass.push(p.n));
    stream.subscribe(
      (e: unknown) => typeof e === 'string',
      (e) => byPredicate.push(e),
    );
    stream.publish(new Ping(1));
    stream.publish('text');
    sub.unsubscribe();
    stream.publish(new Ping(2));
    expect(byClass).to.deep.equal([1]);
    expect(byPredicate).to.deep.equal(['text']);
  });

  it('reports a throwing handler and still delivers to the others', () => {
    const errors: unknown[] = [];
    const stream = new EventStream((e) => errors.push(e));
    const got: number[] = [];
    stream.subscribe(Ping, () => {
      throw new Error('bad handler');
    });
    stream.subscribe(Ping, (p) => got.push(p.n));
    stream.publish(new Ping(3));
    expect(got).to.deep.equal([3]);
    expect(errors).to.have.length(1);
  });

  describe('dead letters', () => {
    let system: ActorSystem;
    beforeEach(() => {
      system = testSystem();
    });
    afterEach(() => system.shutdown());

    it('publishes a DeadLetterEvent and counts by reason for a send to nobody', () => {
      const events: DeadLetterEvent[] = [];
      system.eventStream.subscribe(DeadLetterEvent, (e) => events.push(e));
      const nobody = new PID(system.address, 'nobody');
      system.root.send(nobody, 'hello');
      expect(events).to.have.length(1);
      expect(events[0]!.pid.equals(nobody)).to.equal(true);
      expect(events[0]!.reason).to.equal('not-found');
      expect(system.deadLetters.count).to.equal(1);
    });

    it('logs dead letters through the injected logger, throttled', async () => {
      const lines: unknown[] = [];
      const logger = {
        debug: () => {},
        info: (o: unknown) => lines.push(o),
        warn: () => {},
        error: () => {},
        child: () => logger,
      };
      const s = testSystem({ logger, deadLetterThrottle: { logPerSecond: 3 } });
      for (let i = 0; i < 10; i++) s.root.send(new PID(s.address, 'nobody'), i);
      expect(lines).to.have.length(3);
      expect(s.deadLetters.count).to.equal(10);
      await s.shutdown();
      // The rest of the window is one counted summary line.
      expect(lines).to.have.length(4);
      expect(lines[3]).to.include({ reason: 'not-found', count: 7, total: 10 });
    });
  });
});
