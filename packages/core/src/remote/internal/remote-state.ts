import type { Clock } from '../../clock';
import type { DeadLetters } from '../../dead-letters';
import type { ExpiredDrops } from '../../expired-drops';
import type { EventStream } from '../../event-stream';
import type { Logger } from '../../logger';
import type { ProcessRegistry } from '../../process-registry';
import type { SerializationRegistry } from '../../serialization/serialization-registry';
import type { EnvelopeLimits } from './envelope-limits';
import type { EventLog } from './event-log';
import type { WatchTable } from './watch-table';

/** What the remote's processes and inbound delivery share with the Remote that owns them. */
export interface RemoteState {
  readonly registry: ProcessRegistry;
  readonly deadLetters: DeadLetters;
  readonly eventStream: EventStream;
  readonly logger: Logger;
  readonly serialization: SerializationRegistry;
  readonly maxMessageBytes: number;
  /** What a peer's inbound limits refuse in an envelope (this node's own, which peers share). */
  readonly limits: EnvelopeLimits;
  readonly watches: WatchTable;
  /** This node's `host:port`. */
  readonly address: string;
  /** Counts and logs (throttled) wire events: refused messages among them. */
  readonly events: EventLog;
  /** The system's clock (deadlines). */
  readonly clock: Clock;
  /** The system's counters of expired requests dropped. */
  readonly expired: ExpiredDrops;
}
