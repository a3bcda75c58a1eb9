import { expect } from 'chai';
import {
  AbortError,
  ActorSystem,
  silentLogger,
  DeadLetterError,
  GranaryError,
  InvalidArgumentError,
  InvalidOptionError,
  MailboxFullError,
  NameExistsError,
  Props,
  SystemShutdownError,
  TimeoutError,
} from '../src/index';

describe('errors', () => {
  const cases: [GranaryError, string, string][] = [
    [new TimeoutError('n/a', 5), 'TimeoutError', 'ERR_TIMEOUT'],
    [new MailboxFullError('n/a', 1), 'MailboxFullError', 'ERR_MAILBOX_FULL'],
    [new DeadLetterError('n/a', 'not-found'), 'DeadLetterError', 'ERR_DEAD_LETTER'],
    [new NameExistsError('x'), 'NameExistsError', 'ERR_NAME_EXISTS'],
    [new AbortError('n/a'), 'AbortError', 'ERR_ABORTED'],
    [new InvalidOptionError('opt', 'bad'), 'InvalidOptionError', 'ERR_INVALID_OPTION'],
    [new InvalidArgumentError('arg', 'bad'), 'InvalidArgumentError', 'ERR_INVALID_ARGUMENT'],
    [new SystemShutdownError('s'), 'SystemShutdownError', 'ERR_SHUTDOWN'],
  ];
  for (const [error, name, code] of cases) {
    it(`${name} has name ${name} and code ${code}`, () => {
      expect(error).to.be.instanceOf(GranaryError).and.instanceOf(Error);
      expect(error.name).to.equal(name);
      expect(error.code).to.equal(code);
    });
  }

  it('keeps the cause', () => {
    const cause = new Error('why');
    expect(new AbortError('t', cause).cause).to.equal(cause);
  });

  it('rejects a bad mailbox capacity naming the option', () => {
    expect(() => Props.fromFunc(() => {}, { mailbox: { capacity: 0 } })).to.throw(
      InvalidOptionError,
      'mailbox.capacity',
    );
  });
});

describe('option validation', () => {
  it('rejects a bad throughput or time slice naming the option', () => {
    expect(() => new ActorSystem({ throughput: 0 })).to.throw(InvalidOptionError, 'throughput');
    expect(() => new ActorSystem({ timeSliceMs: -1 })).to.throw(InvalidOptionError, 'timeSliceMs');
  });

  it('rejects a request with a negative timeoutMs with InvalidArgumentError, sending nothing', async () => {
    const system = new ActorSystem({ logger: silentLogger });
    let received = 0;
    const pid = system.root.spawn(
      Props.fromFunc((ctx) => {
        if (ctx.message === 'x') received++;
        if (ctx.message === 'count') ctx.respond(received);
      }),
    );
    const err = await system.root.request(pid, 'x', { timeoutMs: -5 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(InvalidArgumentError);
    expect(err).to.have.property('argument', 'options.timeoutMs');
    expect(await system.root.request(pid, 'count')).to.equal(0);
    await system.shutdown();
  });
});
