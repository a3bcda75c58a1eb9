import type { OpCounterState } from './idempotent-ops';

/** What AckLedger.check() found, comparing what callers were told with what is stored. */
export interface AckReport {
  /** Every attempt (a retry is a new call). */
  calls: number;
  /** Distinct operations acknowledged. */
  acknowledged: number;
  /** Attempts that failed, and per error code. */
  failed: number;
  failedByCode: Record<string, number>;
  /**
   * Acknowledged operations missing from the stored state: per grain, the larger of those
   * whose number is above the stored last number of their caller, and the acknowledged count
   * minus the stored count.
   */
  lost: number;
  /** Grains with at least one lost operation. */
  grainsWithLoss: string[];
  /** Up to 20 lost operations, for the failure message. */
  lostSample: Array<{ grain: string; caller: string; seq: number; stored: number }>;
  /**
   * Acknowledged replies that showed a caller its own earlier acknowledged operation missing
   * (the grain served state older than acknowledged), before `servedAllowedAfter`.
   */
  regressionsServed: number;
  /** Grains whose stored count is above the operations they hold: something applied twice. */
  appliedTwice: string[];
}

interface CallerOps {
  /** Acknowledged operation numbers, in the order acknowledged. */
  acked: number[];
  /** The highest acknowledged. */
  high: number;
}

/**
 * The ledger of a load of idempotent operations (idempotent-ops.ts): records what each caller
 * was told, then checks it against the final stored states. Shared by the durability tests
 * and the chaos test: "no acknowledged operation lost", "none applied twice", "no older state
 * served" are read from it, with counts per error code.
 */
export class AckLedger {
  private readonly grains = new Map<string, Map<string, CallerOps>>();
  private calls = 0;
  private failed = 0;
  private readonly failedByCode: Record<string, number> = {};
  private regressions = 0;
  private acknowledged = 0;
  /** Regressions served from this time on (epoch ms) are allowed (an operator accepted a loss). */
  private allowedFrom = Infinity;

  /** Records an acknowledged operation and the reply's `prev` (see OpReply). */
  acknowledge(grain: string, caller: string, seq: number, prev: number): void {
    this.calls++;
    const ops = this.opsOf(grain, caller);
    if (prev < ops.high && Date.now() < this.allowedFrom) this.regressions++;
    if (seq > ops.high) {
      ops.acked.push(seq);
      ops.high = seq;
      this.acknowledged++;
    }
  }

  /** Records a failed attempt; `code` is the error's code (or its name). */
  fail(code: string): void {
    this.calls++;
    this.failed++;
    this.failedByCode[code] = (this.failedByCode[code] ?? 0) + 1;
  }

  /** From now on, replies showing older state are expected (a loss was accepted on purpose). */
  allowRegressions(): void {
    this.allowedFrom = Math.min(this.allowedFrom, Date.now());
  }

  /** Distinct operations acknowledged so far. */
  get acknowledgedCount(): number {
    return this.acknowledged;
  }

  /** The grains operations were acknowledged on. */
  get grainIds(): string[] {
    return [...this.grains.keys()];
  }

  /**
   * Compares with the stored states (`finals.get(grain)`, null for none stored). An
   * acknowledged operation is lost when the stored last number for its caller is below it.
   */
  check(finals: ReadonlyMap<string, OpCounterState | null>): AckReport {
    let lost = 0;
    const grainsWithLoss: string[] = [];
    const lostSample: AckReport['lostSample'] = [];
    const appliedTwice: string[] = [];
    for (const [grain, callers] of this.grains) {
      const state = finals.get(grain) ?? null;
      // Lost by number: an acknowledged operation above the caller's stored last number.
      let grainLost = 0;
      let ackedHere = 0;
      for (const [caller, ops] of callers) {
        const stored = state?.last[caller] ?? 0;
        ackedHere += ops.acked.length;
        for (const seq of ops.acked) {
          if (seq <= stored) continue;
          grainLost++;
          if (lostSample.length < 20) lostSample.push({ grain, caller, seq, stored });
        }
      }
      // Lost by count: a grain that went back to an older state and then applied later
      // operations holds high numbers but fewer operations than were acknowledged to it.
      grainLost = Math.max(grainLost, ackedHere - (state?.n ?? 0));
      if (grainLost > 0) grainsWithLoss.push(grain);
      lost += grainLost;
      if (state) {
        let held = 0;
        for (const seq of Object.values(state.last)) held += seq;
        if (state.n > held) appliedTwice.push(grain);
      }
    }
    return {
      calls: this.calls,
      acknowledged: this.acknowledged,
      failed: this.failed,
      failedByCode: { ...this.failedByCode },
      lost,
      grainsWithLoss,
      lostSample,
      regressionsServed: this.regressions,
      appliedTwice,
    };
  }

  private opsOf(grain: string, caller: string): CallerOps {
    let callers = this.grains.get(grain);
    if (callers === undefined) {
      callers = new Map();
      this.grains.set(grain, callers);
    }
    let ops = callers.get(caller);
    if (ops === undefined) {
      ops = { acked: [], high: 0 };
      callers.set(caller, ops);
    }
    return ops;
  }
}
