import type { TestCluster } from '@granary/testkit';

/** One fire as a node reported it. */
export interface SeenFire {
  key: string;
  tick: number;
  /** Receive time at the grain minus due time (ms). */
  lateMs: number;
  skipped: number;
  node: string;
  /** Epoch ms the grain received it (due + late). */
  at: number;
}

/**
 * Every fire the nodes of a TestCluster reported (reminder-node.ts `fires` lines), by reminder
 * (`identity/name`), with the checks the acceptance test and the benchmark make.
 */
export class FireLedger {
  readonly byKey = new Map<string, SeenFire[]>();
  /** Fires of a (key, tick) seen more than once. */
  duplicates = 0;
  private readonly seen = new Set<string>();
  private readonly read = new Map<string, number>();

  constructor(
    /** Due time of tick `tick` of reminder `key` (the schedule the test set). */
    private readonly dueOf: (key: string, tick: number) => number,
  ) {}

  /** Reads the lines written since the last call. */
  update(tc: TestCluster): void {
    for (const node of tc.nodes) {
      const lines = node.process?.lines ?? [];
      let i = this.read.get(node.id) ?? 0;
      for (; i < lines.length; i++) {
        const d = lines[i]!.data;
        if (d.type !== 'fires') continue;
        for (const [id, name, tick, lateMs, skipped] of d.f as Array<
          [string, string, number, number, number]
        >) {
          const key = `${id}/${name}`;
          const seenKey = `${key}#${tick}`;
          if (this.seen.has(seenKey)) this.duplicates++;
          else this.seen.add(seenKey);
          const at = this.dueOf(key, tick) + lateMs;
          const list = this.byKey.get(key) ?? [];
          list.push({ key, tick, lateMs, skipped, node: node.id, at });
          this.byKey.set(key, list);
        }
      }
      this.read.set(node.id, i);
    }
  }

  /** Latest activation counts a node reported, summed over nodes. */
  static activations(tc: TestCluster): { activations: number; deactivations: number } {
    let activations = 0;
    let deactivations = 0;
    for (const node of tc.nodes) {
      const lines = node.process?.lines ?? [];
      for (let i = lines.length - 1; i >= 0; i--) {
        const d = lines[i]!.data;
        if (d.type !== 'fires') continue;
        activations += d.activations as number;
        deactivations += d.deactivations as number;
        break;
      }
    }
    return { activations, deactivations };
  }

  /**
   * Ticks the nodes claimed and saw their call fail (their latest `undelivered` counts, summed):
   * the losses the at-most-once rule allows (reminder.ts, CatchUp), each one accounted for.
   */
  static undelivered(tc: TestCluster): number {
    return FireLedger.latestStats(tc).reduce((n, [, st]) => n + (st.undelivered ?? 0), 0);
  }

  /**
   * The latest reminder counters each node reported that tell why a tick went missing
   * (undelivered, taken, fenced, storeErrors), for a failure message.
   */
  static why(tc: TestCluster): string {
    return FireLedger.latestStats(tc)
      .map(
        ([id, st]) =>
          `${id}: undelivered ${st.undelivered}, taken ${st.taken}, fenced ${st.fenced}, storeErrors ${st.storeErrors}`,
      )
      .join('; ');
  }

  /** Each node's latest reported reminder counters (from its last `fires` line that has them). */
  private static latestStats(tc: TestCluster): Array<[string, Record<string, number>]> {
    const out: Array<[string, Record<string, number>]> = [];
    for (const node of tc.nodes) {
      const lines = node.process?.lines ?? [];
      for (let i = lines.length - 1; i >= 0; i--) {
        const st = lines[i]!.data.stats as Record<string, number> | undefined;
        if (lines[i]!.data.type !== 'fires' || st === undefined) continue;
        out.push([node.id, st]);
        break;
      }
    }
    return out;
  }

  /**
   * Per reminder, the ticks due before `cut` that never arrived and were not reported skipped
   * (lost), and the ticks reported skipped.
   */
  gaps(
    key: string,
    cut: number,
    inDoubt: (tick: number) => boolean = () => false,
  ): { lost: number; skipped: number; doubt: number; last: number } {
    const fires = [...(this.byKey.get(key) ?? [])].sort((a, b) => a.tick - b.tick);
    let expected = 0;
    let lost = 0;
    let skipped = 0;
    let doubt = 0;
    const missing = (tick: number): void => {
      if (inDoubt(tick)) doubt++;
      else lost++;
    };
    for (const f of fires) {
      if (f.tick > expected) {
        skipped += f.skipped;
        // The reported skipped ticks are the last ones before this fire.
        for (let t = expected; t < f.tick - f.skipped; t++) missing(t);
      }
      expected = Math.max(expected, f.tick + 1);
    }
    // Ticks due well before the cut that have not arrived at all.
    for (; this.dueOf(key, expected) < cut; expected++) missing(expected);
    return { lost, skipped, doubt, last: expected - 1 };
  }

  /** Quantile of lateness over fires with due time in [from, to). */
  lateness(q: number, from = 0, to = Infinity): number {
    const all: number[] = [];
    for (const list of this.byKey.values()) {
      for (const f of list) if (f.at - f.lateMs >= from && f.at - f.lateMs < to) all.push(f.lateMs);
    }
    if (all.length === 0) return 0;
    all.sort((a, b) => a - b);
    return all[Math.min(all.length - 1, Math.ceil(q * all.length) - 1)]!;
  }

  count(): number {
    let n = 0;
    for (const list of this.byKey.values()) n += list.length;
    return n;
  }
}
