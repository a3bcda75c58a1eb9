import type { Logger } from '@granary/core';
import { createNodeLogger } from '../../src/log';

/** The example's logger writing into memory, with waits on lines (events, not sleeps). */
export class LogCapture {
  readonly lines: string[] = [];
  readonly logger: Logger;
  private readonly waiters = new Set<() => void>();

  constructor() {
    this.logger = createNodeLogger('info', {}, (line) => {
      this.lines.push(line);
      for (const w of [...this.waiters]) w();
    });
  }

  /** Lines matching `pattern`, in order. */
  matching(pattern: RegExp): string[] {
    return this.lines.filter((l) => pattern.test(l));
  }

  /** Resolves once `count` lines match `pattern`; rejects after `timeoutMs` with the log. */
  waitFor(pattern: RegExp, count = 1, timeoutMs = 10_000): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.matching(pattern);
        if (found.length < count) return false;
        clearTimeout(timer);
        this.waiters.delete(onLine);
        resolve(found);
        return true;
      };
      const onLine = (): void => void check();
      const timer = setTimeout(() => {
        this.waiters.delete(onLine);
        reject(
          new Error(
            `${count} x ${pattern} not logged in ${timeoutMs} ms:\n${this.lines.join('\n')}`,
          ),
        );
      }, timeoutMs);
      if (!check()) this.waiters.add(onLine);
    });
  }
}
