import { AckLedger } from './ack-ledger';
import type { OpMessage, OpReply } from './idempotent-ops';

/** Options of OpLoad. */
export interface OpLoadOptions {
  /** Concurrent callers; each has one call in flight at a time. */
  callers: number;
  /** Grain identities the callers spread over. */
  grains: readonly string[];
  /** Sends one operation to a grain; resolves with the grain's reply. */
  call: (grain: string, op: OpMessage) => Promise<OpReply>;
  /**
   * Pause after a failed attempt before the same operation is tried again.
   * @default 20
   */
  retryPauseMs?: number;
}

/** One attempt, for availability and recovery figures. */
interface Attempt {
  start: number;
  end: number;
  ok: boolean;
}

/** Availability of one window: acknowledged / settled attempts. */
export interface AvailabilityWindow {
  /** Window start (epoch ms). */
  at: number;
  ok: number;
  failed: number;
}

/** How long a recovery is judged over: every attempt started in it must succeed. */
const RECOVERY_WINDOW_MS = 1000;

/**
 * Drives `callers` concurrent callers making idempotent operations (idempotent-ops.ts) on
 * `grains`, each caller walking the grains in turn and retrying a failed operation with the
 * same number until it is acknowledged. Records every attempt in an AckLedger and in time, so
 * a test can print availability per window and the time to recover after each fault, and
 * check lost operations against the stored state at the end. Bounded: stop() ends it.
 */
export class OpLoad {
  readonly ledger = new AckLedger();
  private readonly attempts: Attempt[] = [];
  private readonly errorsByGrain = new Map<string, Set<string>>();
  private stopping = false;
  private running: Promise<void>[] = [];

  constructor(private readonly options: OpLoadOptions) {}

  /** Starts the callers. */
  start(): this {
    const { callers, grains } = this.options;
    for (let c = 0; c < callers; c++) this.running.push(this.caller(`c${c}`, c % grains.length));
    return this;
  }

  /** Stops every caller after its current attempt; resolves once all have returned. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
    this.running = [];
  }

  /** Operations acknowledged so far. */
  get acknowledged(): number {
    return this.ledger.acknowledgedCount;
  }

  /** Distinct grains that failed with `code` at least once. */
  grainsFailedWith(code: string): string[] {
    const out: string[] = [];
    for (const [grain, codes] of this.errorsByGrain) if (codes.has(code)) out.push(grain);
    return out;
  }

  /** Acknowledged and failed attempts per `windowMs` window, by completion time. */
  availability(windowMs = 1000): AvailabilityWindow[] {
    if (this.attempts.length === 0) return [];
    let first = Infinity;
    for (const a of this.attempts) first = Math.min(first, a.end);
    const windows: AvailabilityWindow[] = [];
    for (const a of this.attempts) {
      const i = Math.floor((a.end - first) / windowMs);
      while (windows.length <= i) {
        windows.push({ at: first + windows.length * windowMs, ok: 0, failed: 0 });
      }
      if (a.ok) windows[i]!.ok++;
      else windows[i]!.failed++;
    }
    return windows;
  }

  /**
   * Time from `faultAt` (epoch ms) until the first attempt from which every attempt started in
   * the following second succeeded; undefined if the load never got there.
   */
  recoveryMs(faultAt: number): number | undefined {
    const after = this.attempts.filter((a) => a.start >= faultAt).sort((a, b) => a.start - b.start);
    const lastStart = after.length > 0 ? after[after.length - 1]!.start : 0;
    let failedUntil = -1; // index of the last failed attempt seen while scanning backwards
    const clean: boolean[] = new Array<boolean>(after.length);
    for (let i = after.length - 1; i >= 0; i--) {
      if (!after[i]!.ok) failedUntil = i;
      const nextFailure = failedUntil >= 0 ? after[failedUntil]!.start : Infinity;
      clean[i] =
        after[i]!.ok &&
        nextFailure > after[i]!.start + RECOVERY_WINDOW_MS &&
        (after[i]!.start + RECOVERY_WINDOW_MS <= lastStart || failedUntil < 0);
    }
    const at = clean.indexOf(true);
    return at < 0 ? undefined : after[at]!.start - faultAt;
  }

  private async caller(name: string, firstGrain: number): Promise<void> {
    const { grains, call } = this.options;
    const pause = this.options.retryPauseMs ?? 20;
    const next = new Map<string, number>();
    let g = firstGrain;
    while (!this.stopping) {
      const grain = grains[g]!;
      g = (g + 1) % grains.length;
      const seq = (next.get(grain) ?? 0) + 1;
      for (;;) {
        const start = Date.now();
        try {
          const reply = await call(grain, { c: name, s: seq });
          this.attempts.push({ start, end: Date.now(), ok: true });
          this.ledger.acknowledge(grain, name, seq, reply.prev);
          next.set(grain, seq);
          break;
        } catch (err) {
          const code = errorCode(err);
          this.attempts.push({ start, end: Date.now(), ok: false });
          this.ledger.fail(code);
          let codes = this.errorsByGrain.get(grain);
          if (codes === undefined) this.errorsByGrain.set(grain, (codes = new Set()));
          codes.add(code);
          if (this.stopping) return;
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    }
  }
}

/**
 * The code a failure is counted under: for an error a grain threw (a GrainError) the code of
 * what it threw (`originalCode`), else the error's own `code`, else its name.
 */
export function errorCode(err: unknown): string {
  const e = err as { originalCode?: unknown; code?: unknown; name?: unknown } | null;
  return String(e?.originalCode ?? e?.code ?? e?.name ?? 'unknown');
}
