import type { TypedEvents } from '../internal/typed-events';
import type { ClusterEvents } from './cluster-events';

/**
 * The member's shard events, held while Cluster.start runs: start waits for the first claims,
 * so their events would otherwise fire before the caller of start could subscribe.
 */
export class StartShardEvents {
  /** Shard events held while start runs (names and payloads); undefined once delivered. */
  private held: Array<'shard-acquired' | 'shard-released'> | undefined = [];
  private payloads: Array<ClusterEvents['shard-acquired' | 'shard-released']> = [];

  constructor(private readonly events: TypedEvents<ClusterEvents>) {}

  /** Emits a shard event, or holds it while start is still running. */
  emit<K extends 'shard-acquired' | 'shard-released'>(event: K, payload: ClusterEvents[K]): void {
    if (this.held === undefined) this.events.emit(event, payload);
    else {
      // No closure per event: a member starting alone holds one per shard (16,384 per kind).
      this.held.push(event);
      this.payloads.push(payload);
    }
  }

  /**
   * Delivers the shard events held during start in a later macrotask, so listeners attached
   * right after `await Cluster.start(...)` (in its continuation) see every acquisition, in
   * order, as they did when claims were only made after start returned. Later events go straight
   * to the listeners once the held ones are out.
   */
  deliverLater(): void {
    setImmediate(() => {
      const held = this.held ?? [];
      const payloads = this.payloads;
      this.held = undefined;
      this.payloads = [];
      for (let i = 0; i < held.length; i++) this.emitHeld(held[i], payloads[i]);
    });
  }

  private emitHeld(
    event: 'shard-acquired' | 'shard-released',
    payload: ClusterEvents['shard-acquired' | 'shard-released'],
  ): void {
    if (event === 'shard-acquired') this.events.emit(event, payload as ClusterEvents[typeof event]);
    else this.events.emit(event, payload as ClusterEvents[typeof event]);
  }
}
