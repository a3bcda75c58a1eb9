/**
 * `@granary/core/internal`: what Granary's own packages (cluster, pool) need to build routers
 * and runtimes on core: the process seam, entries and their readers, the registry, futures,
 * dead letters, the dispatcher's states, the mailbox and the middleware chain builders; and the
 * remote's connection guard and throttled event log (codegen's gRPC gateway bounds its
 * connections with them).
 *
 * For Granary's packages; no stability promise: anything here may change in any release.
 * Applications write actors with `@granary/core`.
 */
export { DeadLetterProcess } from './dead-letters';
export {
  AWAITING,
  DEAD,
  Dispatcher,
  IDLE,
  RUNNING,
  SCHEDULED,
  type Schedulable,
} from './dispatcher';
export { entryDeadline, entryHeader, entryMessage, entryOf, entrySender } from './entry';
export { FutureProcess, type ReplySink } from './future-process';
export { spawnUnlisted } from './internal/actor-context';
export {
  rejectUnknownNestedOptions,
  rejectUnknownOptions,
  unknownOptionOf,
  withoutUndefined,
} from './internal/known-options';
export { listenError } from './internal/listen-error';
export { retainRuntimeShapes } from './internal/shape-anchor';
export { promiseSettledBy, type Settlers } from './internal/settlers';
export { Mailbox } from './mailbox';
export { makeReceiveChain, makeSenderChain } from './middleware';
export type { ActorProcess, Entry, LocalProcess, Process } from './process';
export { FUTURE_PREFIX } from './internal/future-ids';
export {
  NONHOST,
  ProcessRegistry,
  type AddressResolver,
  type SequencedProcess,
} from './process-registry';
export type { TimerTarget } from './timer-wheel';
export {
  ConnectionGuard,
  type ConnectionEvents,
  type ConnectionGuardNames,
  type ConnectionLimits,
} from './remote/internal/connection-guard';
export { EventLog } from './remote/internal/event-log';
export { peerAddressOf } from './remote/internal/link-route';
export type { PeerSilence } from './remote/internal/peer-silence';
