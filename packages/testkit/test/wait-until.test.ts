import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { TestkitError } from '../src/errors';
import { waitUntil, type Subscribe } from '../src/wait-until';

const on =
  (e: EventEmitter): Subscribe =>
  (listener) => {
    e.on('change', listener);
    return () => e.off('change', listener);
  };

describe('waitUntil', () => {
  it('resolves at once when the check already holds, subscribing nothing for long', async () => {
    const e = new EventEmitter();
    await waitUntil(() => true, 'now', { on: [on(e)] });
    expect(e.listenerCount('change')).to.equal(0);
  });

  it('re-checks after each event and unsubscribes once the check holds', async () => {
    const e = new EventEmitter();
    let n = 0;
    const done = waitUntil(() => n >= 3, 'three changes', { on: [on(e)] });
    for (let i = 0; i < 3; i++) {
      n++;
      e.emit('change');
    }
    await done;
    expect(e.listenerCount('change')).to.equal(0);
  });

  it('rejects with TestkitError naming what it waited for after the timeout', async () => {
    const e = new EventEmitter();
    const err = await waitUntil(() => false, 'a change that never comes', {
      on: [on(e)],
      timeoutMs: 30,
    }).catch((x: unknown) => x);
    expect(err).to.be.instanceOf(TestkitError);
    expect((err as Error).message).to.contain('a change that never comes');
    expect(e.listenerCount('change')).to.equal(0);
  });
});
