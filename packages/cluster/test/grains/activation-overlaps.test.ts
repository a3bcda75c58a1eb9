import { expect } from 'chai';
import type { ActivationEvent } from '../../src/grains/grains-options';
import { overlapReport, overlaps } from './activation-overlaps';

function act(activationId: string, member: string, at: number): ActivationEvent {
  return { type: 'activate', kind: 'echo', identity: 'g', activationId, member, at };
}

function deact(activationId: string, member: string, at: number, reason = 'rebalance') {
  const e: ActivationEvent = { ...act(activationId, member, at), type: 'deactivate', reason };
  return e;
}

describe('activation log overlap check', () => {
  it('an activation that starts and ends in the same millisecond is one interval, not an open one', () => {
    // The log of a rolling-restart run the old check failed: activate and deactivate of a-32 in
    // the same ms (a grain activated as its node began to leave), then the next owner's.
    const log = [
      act('a-32', 'node-0', 1028),
      deact('a-32', 'node-0', 1028, 'shutdown'),
      act('b-44', 'node-2', 1163),
      deact('b-44', 'node-2', 5071),
      act('c-6', 'node-4', 5218),
    ];
    expect(overlaps(log)).to.deep.equal([]);
    // Same events, any order in the log (lines of several processes are concatenated).
    expect(overlaps([...log].reverse())).to.deep.equal([]);
  });

  it('reports an activation that starts before the previous one ended, on any member', () => {
    const log = [
      act('a', 'n1', 10),
      act('b', 'n2', 20),
      deact('a', 'n1', 30),
      deact('b', 'n2', 40),
    ];
    expect(overlaps(log)).to.deep.equal(['echo/g: b on n2 while a on n1']);
  });

  it('a start 1 ms before the previous end overlaps; in the same ms it cannot be ordered', () => {
    expect(overlaps([act('a', 'n1', 10), deact('a', 'n1', 30), act('b', 'n2', 29)])).to.deep.equal([
      'echo/g: b on n2 while a on n1',
    ]);
    expect(overlaps([act('a', 'n1', 10), deact('a', 'n1', 30), act('b', 'n2', 30)])).to.deep.equal(
      [],
    );
  });

  it('an activation that never ended overlaps every later one', () => {
    const log = [act('a', 'n1', 10), act('b', 'n2', 20), deact('b', 'n2', 30), act('c', 'n3', 40)];
    expect(overlaps(log)).to.deep.equal([
      'echo/g: b on n2 while a on n1',
      'echo/g: c on n3 while a on n1',
    ]);
  });

  it('a deactivation whose activation is missing from the log counts as active from the start', () => {
    const log = [act('a', 'n1', 10), deact('a', 'n1', 20), deact('x', 'n2', 50)];
    expect(overlaps(log)).to.deep.equal(['echo/g: a on n1 while x on n2']);
  });

  it('identities are checked separately', () => {
    const other = { ...act('b', 'n2', 15), identity: 'h' };
    expect(overlaps([act('a', 'n1', 10), other, deact('a', 'n1', 20)])).to.deep.equal([]);
  });

  it('the report lists each overlap and the time-ordered log of the identity', () => {
    const log = [act('a', 'n1', 10), act('b', 'n2', 20), deact('a', 'n1', 30, 'shutdown')];
    expect(overlapReport(log, ['n1: exited'])).to.equal(
      [
        '1 overlapping activation(s):',
        '  echo/g: b on n2 while a on n1',
        'activation log of echo/g:',
        '  10 activate a on n1',
        '  20 activate b on n2',
        '  30 deactivate a on n1 (shutdown)',
        'n1: exited',
      ].join('\n'),
    );
    expect(overlapReport([act('a', 'n1', 10)])).to.equal('no overlapping activations');
  });
});
