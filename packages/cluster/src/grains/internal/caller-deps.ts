import type { ActorSystem, Clock, RandomSource } from '@granary/core';
import type { Topology } from '../../membership/topology';
import type { ResolvedOverloadOptions } from '../../overload/overload-options';
import type { OverloadCounters } from '../../overload/overload-stats';
import type { CallTelemetry } from '../../telemetry/call-telemetry';

/** What the caller needs from its cluster member. */
export interface CallerDeps {
  readonly system: ActorSystem;
  /** This member's id (named by the OverloadedError of maxOutstandingCalls). */
  readonly memberId: string;
  /** maxOutstandingCalls and the retry budget. */
  readonly overload: ResolvedOverloadOptions;
  /** The member's overload counters (outstanding calls, refusals, drops). */
  readonly counters: OverloadCounters;
  /** The deadline of a call that does not set `timeoutMs` (the cluster's requestTimeoutMs). */
  readonly defaultTimeoutMs: number;
  /** The member's latest topology. */
  topology(): Topology;
  shardCountOf(kind: string): number;
  onSendFailed(kind: string, identity: string, error: unknown): void;
  /** True once the member's actor system shuts down: calls from it end at once. */
  stopped(): boolean;
  /** Deadlines, their checks and the waits between attempts (the system's clock). */
  readonly clock: Clock;
  /** Backoff jitter (the system's random source). */
  readonly random: RandomSource;
  /** True while this member itself is fenced (its lease is lost or not provably alive). */
  membershipUnavailable(): boolean;
  /**
   * The caller has no transport to other nodes (a Cluster started without `remote`): a call
   * whose owner is elsewhere fails at once with NoTransportError.
   * @default false
   */
  readonly noTransport?: boolean;
  /** Spans and metrics of the calls (none when absent). */
  readonly calls?: CallTelemetry | undefined;
}
