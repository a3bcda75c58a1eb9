import { expect } from 'chai';
import { LogThrottle, type Clock, type Logger } from '../src/index';

/** Timers run only when `advance` passes their due time. */
class StepClock implements Clock {
  t = 0;
  private timers: Array<{ due: number; fn: () => void }> = [];
  now(): number {
    return this.t;
  }
  monotonic(): number {
    return this.t;
  }
  setTimer(fn: () => void, ms: number): unknown {
    const timer = { due: this.t + ms, fn };
    this.timers.push(timer);
    return timer;
  }
  clearTimer(handle: unknown): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.timers.filter((t) => t.due <= this.t);
    this.timers = this.timers.filter((t) => t.due > this.t);
    for (const t of due) t.fn();
  }
}

function recorder(): {
  logger: Logger;
  lines: Array<{ fields: Record<string, unknown>; msg: string }>;
} {
  const lines: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  const at = (o: object | string, m?: string) =>
    lines.push({ fields: o as Record<string, unknown>, msg: m ?? '' });
  const logger: Logger = { debug: at, info: at, warn: at, error: at, child: () => logger };
  return { logger, lines };
}

describe('LogThrottle', () => {
  it('logs the first event of a key, counts the rest, and summarizes them per interval', () => {
    const clock = new StepClock();
    const { logger, lines } = recorder();
    const throttle = new LogThrottle(logger, 1000, clock);
    for (let i = 0; i < 500; i++)
      throttle.log('refused', 'warn', { peer: `p${i}` }, 'handshake refused');
    throttle.log('other', 'warn', {}, 'something else');
    expect(lines.map((l) => l.msg)).to.deep.equal(['handshake refused', 'something else']);
    clock.advance(1000);
    expect(lines).to.have.length(3);
    expect(lines[2]!.fields).to.include({ peer: 'p0', count: 499, intervalMs: 1000, total: 500 });
    expect(lines[2]!.msg).to.match(/499 more like it in 1000 ms/);
    // The flood goes on: one summary per interval, no new line per event.
    for (let i = 0; i < 10; i++) throttle.log('refused', 'warn', {}, 'handshake refused');
    clock.advance(1000);
    expect(lines).to.have.length(4);
    expect(lines[3]!.fields).to.include({ count: 10, total: 510 });
    // Quiet for an interval: the next event is logged as itself again.
    clock.advance(1000);
    throttle.log('refused', 'warn', {}, 'handshake refused');
    expect(lines[4]!.msg).to.equal('handshake refused');
    expect(throttle.total('refused')).to.equal(511);
  });

  it('logs a burst one by one before counting, and close() writes what is pending', () => {
    const { logger, lines } = recorder();
    const throttle = new LogThrottle(logger, 1000, new StepClock(), 3);
    for (let i = 0; i < 10; i++) throttle.log('k', 'info', { i }, 'dead letter');
    expect(lines.map((l) => l.fields.i)).to.deep.equal([0, 1, 2]);
    throttle.close();
    expect(lines[3]!.fields).to.include({ count: 7, total: 10 });
  });
});
