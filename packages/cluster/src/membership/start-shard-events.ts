import type { TypedEvents } from '../internal/typed-events';
import type { ClusterEvents } from './cluster-events';

/**
 * The member's shard events, held while Cluster.start runs: start waits for the first claims,
 * so their events would otherwise fire before the caller of start could subscribe.
 */
export class StartShardEvents {
  /** Shard events held while start runs; undefined once delivered. */
  private held: Array<() => void> | undefined = [];

  constructor(private readonly events: TypedEvents<ClusterEvents>) {}

  /** Emits a shard event, or holds it while start is still running. */
  emit<K extends 'shard-acquired' | 'shard-released'>(event: K, payload: ClusterEvents[K]): void {
    if (this.held === undefined) this.events.emit(event, payload);
    else this.held.push(() => this.events.emit(event, payload));
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
      this.held = undefined;
      for (const emit of held) emit();
    });
  }
}
