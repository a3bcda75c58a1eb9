/** Where the workers of a cluster pool should run, and the moves to get there. */
export interface Placement {
  /** Worker index → member id. */
  assignment: Map<number, string>;
  /** Activations to end: duplicates, indices beyond `size`, workers moved off a member. */
  retire: Array<{ host: string; index: number }>;
  /** Workers to start on a member (new, or moved there). */
  activate: Array<{ host: string; index: number }>;
}

/**
 * Spreads `size` workers over `hosts` so each has ⌊N/M⌋ or ⌈N/M⌉ (at most `maxPerNode`),
 * moving as few as possible: a worker already running on a live member stays there unless that
 * member is above its share; workers of members that are gone (absent from `current`) and new
 * ones go to the members with the fewest.
 *
 * @param current member id → worker indices running there (what the members reported)
 */
export function place(
  size: number,
  hosts: readonly string[],
  current: ReadonlyMap<string, readonly number[]>,
  maxPerNode: number,
): Placement {
  const m = hosts.length;
  const cap = Math.min(Math.ceil(size / m), maxPerNode);
  const count = new Map(hosts.map((h) => [h, 0]));
  const assignment = new Map<number, string>();
  const retire: Placement['retire'] = [];
  const activate: Placement['activate'] = [];
  const owned = new Map<string, number[]>(hosts.map((h) => [h, []]));

  // Keep what runs where it may stay (the lowest indices first), end the rest.
  for (const host of hosts) {
    for (const index of [...(current.get(host) ?? [])].sort((a, b) => a - b)) {
      if (index < size && !assignment.has(index) && count.get(host)! < cap) {
        assignment.set(index, host);
        count.set(host, count.get(host)! + 1);
        owned.get(host)!.push(index);
      } else {
        retire.push({ host, index });
      }
    }
  }
  const fewest = (): string | undefined => {
    let best: string | undefined;
    for (const h of hosts) {
      if (count.get(h)! < cap && (best === undefined || count.get(h)! < count.get(best)!)) best = h;
    }
    return best;
  };
  const assign = (index: number, host: string): void => {
    assignment.set(index, host);
    count.set(host, count.get(host)! + 1);
    owned.get(host)!.push(index);
    activate.push({ host, index });
  };
  for (let index = 0; index < size; index++) {
    if (assignment.has(index)) continue;
    const host = fewest();
    if (host !== undefined) assign(index, host);
  }
  // Kept workers can leave a member more than one below another: even them out.
  for (;;) {
    const sorted = [...hosts].sort((a, b) => count.get(a)! - count.get(b)!);
    const low = sorted[0]!;
    const high = sorted[sorted.length - 1]!;
    if (count.get(high)! - count.get(low)! <= 1) break;
    const list = owned.get(high)!.sort((a, b) => a - b);
    const index = list.pop()!;
    count.set(high, count.get(high)! - 1);
    const started = activate.findIndex((a) => a.host === high && a.index === index);
    if (started >= 0) activate.splice(started, 1);
    else retire.push({ host: high, index });
    assign(index, low);
  }
  return { assignment, retire, activate };
}
