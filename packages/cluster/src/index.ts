export { VERSION } from './version';
export { Cluster } from './cluster';
export { DEFAULT_CLUSTER_OPTIONS } from './cluster-options';
export type { ClusterOptions, ClusterRemoteOptions, KindSpec } from './cluster-options';
export type {
  ClusterEvents,
  ShardAcquired,
  ShardReleased,
  ShardReleaseReason,
} from './membership/cluster-events';
export type { BeforeReleaseHook } from './membership/shard-ownership';
export { EMPTY_TOPOLOGY } from './membership/topology';
export type { Member, MemberStatus, Topology } from './membership/topology';
export type {
  ClaimReleased,
  ClaimResult,
  HeldClaims,
  ClusterProvider,
  JoinRequest,
  LeaseHealth,
  ReleaseRequest,
} from './providers/cluster-provider';
export {
  MemoryProvider,
  DEFAULT_MEMORY_PROVIDER_OPTIONS,
} from './providers/memory/memory-provider';
export type { MemoryProviderOptions } from './providers/memory/memory-provider';
export { MemoryClusterTable } from './providers/memory/memory-table';
export { EtcdProvider } from './providers/etcd/etcd-provider';
export {
  DEFAULT_ETCD_PROVIDER_OPTIONS,
  MIN_ETCD_TTL_SECONDS,
} from './providers/etcd/etcd-provider-options';
export type { EtcdProviderOptions } from './providers/etcd/etcd-provider-options';
export { SeedProvider } from './providers/seed/seed-provider';
export { DEFAULT_SEED_PROVIDER_OPTIONS } from './providers/seed/seed-provider-options';
export type { SeedProviderOptions } from './providers/seed/seed-provider-options';
export { shardOf, fnv1a32 } from './placement/shard-of';
export { ownerOf, hostsOf } from './placement/owner-of';
export type { ClusterLogger } from './internal/logger';
export { OpsServer } from './ops/ops-server';
export { DEFAULT_OPS_OPTIONS, OPS_PATHS } from './ops/ops-options';
export type { OpsHandler, OpsOptions, PrometheusHandler } from './ops/ops-options';
export type { HealthCheck, HealthReport } from './ops/health';
export { INSTRUMENTATION_SCOPE } from './telemetry/telemetry';
export type { TelemetryOptions } from './telemetry/telemetry';
export {
  ATTR_RPC_SYSTEM_NAME,
  ATTR_RPC_METHOD,
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_GRAIN_KIND,
  ATTR_GRAIN_KEY,
  ATTR_ACTIVATION_ID,
  ATTR_NODE_ID,
  ATTR_SHARD_EPOCH,
  ATTR_SHARD,
  ATTR_DEADLINE_REMAINING_MS,
  ATTR_CALL_OUTCOME,
  ATTR_REASON,
  ATTR_ATTEMPT,
  ATTR_OUTCOME,
  ATTR_STATE_OPERATION,
  ATTR_MEMBER_STATUS,
  ATTR_DIRECTION,
  RPC_SYSTEM,
} from './telemetry/attributes';
export type { CallOutcome } from './telemetry/attributes';
export {
  ClusterError,
  JoinTimeoutError,
  ConnectTimeoutError,
  JoinRefusedError,
  NotJoinedError,
  LeaseLostError,
  ClusterStoppedError,
  MembershipRecordRejectedError,
} from './errors';
export type { StateStore, StateRecord, StateWriteOptions } from './state/state-store';
export { MemoryStateStore } from './state/memory/memory-state-store';
export { RedisStateStore } from './state/redis/redis-state-store';
export { DEFAULT_REDIS_STATE_STORE_OPTIONS } from './state/redis/redis-state-store-options';
export type { RedisStateStoreOptions } from './state/redis/redis-state-store-options';
export { DURABILITY_LEVELS } from './state/durability';
export type { Durability, StateLostPolicy } from './state/durability';
export type { ServerPersistence } from './state/redis/server-facts';
export { checkServerPersistence } from './state/redis/durability-plan';
export type { LostGrain, StateLossReport, StateLossTarget } from './state/redis/state-loss-admin';
export type { StoreLoss } from './state/redis/store-identity';
export type { StateLossCounts } from './state/redis/loss-ledger';
export { PersistentState } from './state/persistent-state';
export type { PersistentStateOptions } from './state/persistent-state';
export { decodeState } from './state/codecs/state-codec';
export type { StateCodec } from './state/codecs/state-codec';
export { jsonStateCodec } from './state/codecs/json-state-codec';
export type { JsonStateCodecOptions } from './state/codecs/json-state-codec';
export { protobufStateCodec } from './state/codecs/protobuf-state-codec';
export type {
  GeneratedMessageCodec,
  ProtobufStateType,
  ProtobufTypeRegistry,
} from './state/codecs/protobuf-state-codec';
export {
  StateStoreError,
  InconsistentStateError,
  StateUnavailableError,
  StateDecodeError,
  StateCorruptError,
  StateNotLoadedError,
  StateLostError,
  StateDurabilityError,
  StateWriteRefusedError,
  StateTooLargeError,
} from './state/errors';
export type { StateConflictReason, StateLossEvidence } from './state/errors';
export { kind, DEFAULT_KIND_OPTIONS } from './grains/kind';
export type { KindDefinition, KindOptions } from './grains/kind';
export type { KindStateOptions } from './grains/kind-state';
export { GrainWithState, GRAIN_STATE, stateOf } from './grains/grain-state';
export type { GrainState } from './grains/grain-state';
export type {
  Grain,
  GrainContext,
  GrainCallOptions,
  GrainSendOptions,
  GrainClusterHandle,
  DeactivationReason,
  GrainTimers,
  GrainTimer,
  GrainTimerHandler,
  GrainTimerOptions,
  GrainEveryOptions,
} from './grains/grain';
export { DEFAULT_GRAINS_OPTIONS } from './grains/grains-options';
export type { GrainsOptions, ActivationEvent } from './grains/grains-options';
export { grainIdOf } from './grains/internal/call-headers';
export { GranaryClient } from './client/granary-client';
export { DEFAULT_GRANARY_CLIENT_OPTIONS } from './client/granary-client-options';
export type {
  GranaryClientOptions,
  GranaryClientEtcdOptions,
} from './client/granary-client-options';
export { installShutdownSignals } from './shutdown-signals';
export { isReminderFire, CATCH_UP_POLICIES } from './reminders/reminder';
export type {
  CatchUp,
  GrainReminders,
  JobOutcome,
  ReminderFire,
  ReminderInfo,
  ReminderOptions,
} from './reminders/reminder';
export type {
  ClaimResult as ReminderClaimResult,
  ReminderSpec,
  ReminderStore,
  StoredReminder,
  TickClaim,
} from './reminders/reminder-store';
export type { ReminderStats } from './reminders/reminder-stats';
export type {
  LoadedReminder,
  LoadedReminders,
  ReminderCursor,
  ReminderSummary,
} from './reminders/reminder-service';
export type { RemindersOptions } from './reminders/reminders-options';
export {
  DEFAULT_REMINDERS_OPTIONS,
  MIN_PERIOD_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
} from './reminders/reminders-options';
export { MemoryReminderStore } from './reminders/memory/memory-reminder-store';
export {
  RedisReminderStore,
  DEFAULT_REDIS_REMINDER_STORE_OPTIONS,
} from './reminders/redis/redis-reminder-store';
export type { RedisReminderStoreOptions } from './reminders/redis/redis-reminder-store';
export type { ReminderStoreLoss } from './reminders/redis/reminder-store-loss';
export {
  ReminderCorruptError,
  ReminderError,
  ReminderFencedError,
  ReminderStoreUnavailableError,
  RemindersBusyError,
  RemindersNotConfiguredError,
} from './reminders/errors';
export type { ShutdownSignalsOptions } from './shutdown-signals';
export {
  GrainError,
  DeadlineExceededError,
  ActivationDeniedError,
  DeadlockError,
  CallChainTooLongError,
  NotOwnerError,
  CallOutcomeUnknownError,
  TurnTimeoutError,
  MemberFencedError,
  NoHostError,
  NoTransportError,
} from './errors';
export type { NoHostDetails } from './errors';
export { OverloadedError } from './overload/errors';
export type { OverloadLimit } from './overload/errors';
export { DEFAULT_OVERLOAD_OPTIONS } from './overload/overload-options';
export type {
  LoadSheddingOptions,
  OverloadOptions,
  RetryBudgetOptions,
} from './overload/overload-options';
export type { OverloadStats } from './overload/overload-stats';
export type { TurnStats } from './grains/hosted-grains';
export { PersistentGrain, DEFAULT_PERSISTENT_GRAIN_OPTIONS } from './grains/persistent-grain';
export type { PersistentGrainOptions } from './grains/persistent-grain';
export { threaded } from './threads/threaded';
export { DEFAULT_THREADED_OPTIONS } from './threads/threaded-options';
export type { ThreadedOptions } from './threads/threaded-options';
export type { ThreadHandler, ThreadTaskContext } from './threads/thread-protocol';
export {
  ThreadError,
  ThreadHandlerError,
  ThreadTaskAbortedError,
  ThreadCrashedError,
  ThreadCloneError,
  ThreadPoolClosedError,
} from './threads/errors';
export { ClusterIntrospection } from './cluster-introspection';
export type { GrainLocation, MemberReport } from './cluster-introspection';
export type { LocalActivation } from './grains/hosted-grains';
export { LATENCY_BOUNDS_MS, quantileOf } from './grains/grain-stats';
export type { GrainStatsSnapshot, HotGrain } from './grains/grain-stats';
