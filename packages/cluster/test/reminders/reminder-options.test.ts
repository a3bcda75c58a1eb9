import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { specOf } from '../../src/reminders/grain-reminders';
import type { ReminderOptions } from '../../src/reminders/reminder';

const NOW = 1_800_000_000_000;

/** specOf's error for options a JavaScript caller (or a config file) may pass. */
function refusal(options: unknown): InvalidArgumentError {
  try {
    specOf(options as ReminderOptions, NOW);
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidArgumentError);
    return err as InvalidArgumentError;
  }
  throw new Error(`accepted ${String(options)}`);
}

describe('reminders.set options (specOf)', () => {
  it('refuses a misspelt option, naming the one it likely meant (period made a job)', () => {
    const err = refusal({ dueInMs: 10, period: 60_000, catchUp: 'skip' });
    expect(err.argument).to.equal('period');
    expect(err.message).to.include("did you mean 'periodMs'?");
  });

  it('refuses a dueInMs that is a string, naming dueInMs', () => {
    const err = refusal({ dueInMs: '1000' });
    expect(err.argument).to.equal('dueInMs');
    expect(err.message).to.include("'1000' (a string)");
  });

  it('refuses a dueAt that is no number', () => {
    expect(refusal({ dueAt: '2027-01-01' }).argument).to.equal('dueAt');
  });

  it('refuses data JSON cannot carry with InvalidArgumentError, not a bare TypeError', () => {
    expect(refusal({ dueInMs: 10, data: 10n }).argument).to.equal('data');
    expect(refusal({ dueInMs: 10, data: () => 1 }).argument).to.equal('data');
  });

  it('accepts every documented option', () => {
    const spec = specOf(
      {
        dueInMs: 10,
        periodMs: 1000,
        catchUp: 'once',
        maxAttempts: 3,
        backoffMs: 50,
        data: { to: 'ops' },
      },
      NOW,
    );
    expect(spec).to.deep.equal({
      dueAt: NOW + 10,
      periodMs: 1000,
      catchUp: 'once',
      maxAttempts: 3,
      backoffMs: 50,
      data: { to: 'ops' },
    });
  });
});
