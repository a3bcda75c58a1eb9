import type { Props } from '@granary/core';
import type { Activation } from '../activation';
import type { KindDefinition } from '../kind';
import type { GrainHost } from './grain-host';
import type { IdleList } from './idle-list';

/** A kind this member hosts: its definition and its activations, by shard then identity. */
export class KindSlot {
  /** Activations per shard; a shard's map is dropped when it empties. */
  readonly shards: Array<Map<string, Activation> | undefined>;
  /** 1 while the shard is being drained for release: no new activations in it. */
  readonly draining: Uint8Array;
  /** Live activations of the kind. */
  count = 0;
  /** Passivation of the kind's activations (undefined: idleTimeoutMs is Infinity). */
  idle: IdleList | undefined = undefined;
  /** Props of the kind's activations (made by the activator on first use). */
  props: Props | undefined = undefined;

  constructor(
    readonly def: KindDefinition,
    readonly shardCount: number,
    /** The member's grain runtime (activations reach it through their slot). */
    readonly host: GrainHost,
  ) {
    this.shards = new Array<Map<string, Activation> | undefined>(shardCount);
    this.draining = new Uint8Array(shardCount);
  }

  get(shard: number, identity: string): Activation | undefined {
    return this.shards[shard]?.get(identity);
  }

  add(a: Activation): void {
    let m = this.shards[a.shard];
    if (m === undefined) this.shards[a.shard] = m = new Map();
    m.set(a.identity, a);
    this.count++;
  }

  remove(a: Activation): void {
    const m = this.shards[a.shard];
    if (m === undefined || m.get(a.identity) !== a) return;
    m.delete(a.identity);
    this.count--;
    if (m.size === 0) this.shards[a.shard] = undefined;
  }

  /** The activations of one shard (a copy). */
  inShard(shard: number): Activation[] {
    const m = this.shards[shard];
    return m === undefined ? [] : [...m.values()];
  }
}
