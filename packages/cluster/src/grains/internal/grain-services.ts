import type { ActorSystem, Logger, PID } from '@granary/core';
import type { LoadShedder } from '../../overload/load-shedder';
import type { OverloadCounters } from '../../overload/overload-stats';
import type { GrainClusterHandle } from '../grain';
import type { GrainCaller } from '../grain-caller';
import type { ActivationEvent } from '../grains-options';
import type { GrainReminders } from '../../reminders/reminder';
import type { GrainMetrics } from '../../telemetry/grain-metrics';
import type { StateTelemetry } from '../../telemetry/state-telemetry';
import { ClusterTelemetry } from '../../telemetry/telemetry';

/**
 * What every kind a member hosts shares (one object per member, built with the Cluster): the
 * actor system, the caller the grains' own calls go through, the handle grains see as
 * `ctx.cluster`, logging, whether the member still takes new activations, and its load.
 */
export class GrainServices {
  /** False once the member leaves or stops: no new activations. */
  accepting = true;
  /** The reminders of a grain (undefined when the member has no reminder store). */
  reminders: ((kind: string, id: string) => GrainReminders) | undefined = undefined;
  /** Spans and metrics of the grains' state store operations (set by the Cluster). */
  state: StateTelemetry | undefined = undefined;
  /** The logger state stores without one of their own take (`{ component: 'state' }`). */
  stateLogger: Logger;
  /**
   * The random part of this member's activation and chain ids (48 bits from the system's
   * random source, so a simulation with a seeded one makes the same ids).
   */
  readonly idPrefix: string;

  constructor(
    readonly system: ActorSystem,
    /** The member's caller: the calls grains make go through it (with their chain). */
    readonly caller: GrainCaller,
    /** What grains see as `ctx.cluster`. */
    readonly cluster: GrainClusterHandle,
    readonly logger: Logger,
    /** Deadline given to onActivate (ms): the cluster's requestTimeoutMs. */
    readonly activationTimeoutMs: number,
    /** The activation log (GrainsOptions.onActivation). */
    readonly onActivation: ((event: ActivationEvent) => void) | undefined,
    /** The member's pending calls, its bound and its load shedding. */
    readonly load: LoadShedder,
    /** The member's overload counters. */
    readonly counters: OverloadCounters,
    /** Spans of turns, activations and deactivations. */
    readonly telemetry: ClusterTelemetry = ClusterTelemetry.DISABLED,
    /** Histograms of activations and state operations (undefined: no metrics recorded). */
    readonly metrics: GrainMetrics | undefined = undefined,
  ) {
    this.stateLogger = logger;
    const draw = (): string =>
      Math.floor(system.random() * 0x1000000)
        .toString(16)
        .padStart(6, '0');
    this.idPrefix = draw() + draw();
  }

  /** True when activations are timed (metrics are recorded). */
  get timed(): boolean {
    return this.metrics !== undefined;
  }

  /** Sends a reply (or an error reply) to a caller; a missing sender drops it. */
  reply(to: PID | undefined, message: unknown): void {
    if (to !== undefined) this.system.root.send(to, message);
  }
}
