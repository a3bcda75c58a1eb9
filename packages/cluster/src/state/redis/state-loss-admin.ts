import type { StoreLoss } from './store-identity';

/** One grain marked lost and not accepted yet. */
export interface LostGrain {
  kind: string;
  id: string;
  /** The newest version known to have been acknowledged. */
  seenVersion: number;
  /** The version the store holds (null: nothing). */
  foundVersion: number | null;
}

/** What a store holds as lost and not accepted: the operator's view (RedisStateStore.stateLoss). */
export interface StateLossReport {
  /** A loss of the whole store (identity marker gone or changed), or null. */
  store: StoreLoss | null;
  /** Grains marked lost, refused until accepted. */
  grains: LostGrain[];
}

/** Which losses acceptStateLoss() accepts. */
export interface StateLossTarget {
  /** Only this kind's grains (and the store-wide loss for this kind only). */
  kind: string;
  /** Only this grain (of `kind`). */
  id?: string;
}

/** What the admin functions need from the store. */
export interface LossAdminStore {
  /** Keys of the grains marked lost (the index set; advisory, the marks are authoritative). */
  markedKeys(): Promise<string[]>;
  /** `[version, lost mark]` of each key, as stored (null when absent). */
  marks(keys: string[]): Promise<Array<[string | null, string | null]>>;
  /** kind and id of a grain key, or undefined for a key that is not one. */
  parseKey(key: string): { kind: string; id: string } | undefined;
  keyOf(kind: string, id: string): string;
  /** Accepts one grain's loss (`force`: even without a mark); resolves with whether it did. */
  resolve(key: string, force: boolean): Promise<boolean>;
  /** Accepts the store-wide loss for one kind or ('') all; resolves with whether there was one. */
  acceptStore(kind: string): Promise<boolean>;
  /** The current store-wide loss, checked afresh. */
  storeLoss(): Promise<StoreLoss | null>;
}

/** Lists the unaccepted losses: the store-wide one and every marked grain. */
export async function listStateLoss(store: LossAdminStore): Promise<StateLossReport> {
  const keys = await store.markedKeys();
  const marks = keys.length > 0 ? await store.marks(keys) : [];
  const grains: LostGrain[] = [];
  keys.forEach((key, i) => {
    const [version, lost] = marks[i]!;
    const name = store.parseKey(key);
    if (lost === null || name === undefined) return; // accepted since, or not a grain key
    grains.push({
      ...name,
      seenVersion: Number(lost),
      foundVersion: version === null ? null : Number(version),
    });
  });
  return { store: await store.storeLoss(), grains };
}

/**
 * The operator's decision: carry on from what the store holds now. Without a target, accepts
 * the store-wide loss and every marked grain; with `{ kind }`, that kind's; with `{ kind, id }`,
 * that grain (which then reads as what the store holds, or as empty). Resolves with the number
 * of grains accepted (the store-wide loss is not a grain).
 */
export async function acceptStateLoss(
  store: LossAdminStore,
  target?: StateLossTarget,
): Promise<{ store: boolean; grains: number }> {
  if (target?.id !== undefined) {
    const done = await store.resolve(store.keyOf(target.kind, target.id), true);
    return { store: false, grains: done ? 1 : 0 };
  }
  const storeAccepted = await store.acceptStore(target?.kind ?? '');
  let grains = 0;
  for (const key of await store.markedKeys()) {
    const name = store.parseKey(key);
    if (name === undefined || (target !== undefined && name.kind !== target.kind)) continue;
    if (await store.resolve(key, false)) grains++;
  }
  return { store: storeAccepted, grains };
}
