export { VERSION } from './version';
export { SYSTEM_CLOCK, type Clock, type RandomSource } from './clock';
export type { ExpiredDrops } from './expired-drops';
export {
  ActorSystem,
  DEFAULT_ACTOR_SYSTEM_OPTIONS,
  type ActorSystemOptions,
  type SystemRemote,
} from './actor-system';
export type { Actor, Context, Producer, ReceiveFunc, SendOptions, SenderContext } from './context';
export {
  DeadLetterEvent,
  DeadLetters,
  DEFAULT_DEAD_LETTER_OPTIONS,
  type DeadLetterOptions,
} from './dead-letters';
export { DEFAULT_DISPATCHER_OPTIONS, type DispatcherOptions } from './dispatcher';
export {
  AbortError,
  DeadLetterError,
  EndpointUnavailableError,
  GranaryError,
  HandshakeError,
  InsecureRemoteError,
  InvalidArgumentError,
  InvalidOptionError,
  LinkLostError,
  MailboxFullError,
  MessageTooLargeError,
  NameExistsError,
  PeerNotReadingError,
  RemoteBackpressureError,
  RemoteError,
  RemoteLimitError,
  SerializationError,
  SystemShutdownError,
  TimeoutError,
  UnknownKindError,
  UnknownTypeError,
  registerErrorClasses,
  type ErrorData,
  type HandshakeRefusal,
} from './errors';
export { EventStream, type Subscription } from './event-stream';
export type { RequestOptions } from './future-process';
export { createStderrLogger, silentLogger, type LogFn, type Logger, type LogLevel } from './logger';
export { LogThrottle } from './log-throttle';
export {
  BAGGAGE_HEADER,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  incomingTraceContext,
  injectSpanContext,
  injectTraceContext,
  parseTraceparent,
  traceContextOf,
  traceparentOf,
  withActiveTraceContext,
} from './trace-context';
export { withTraceIds } from './traced-logger';
export { escapeTerminalControls, TERMINAL_CONTROLS } from './terminal-text';
export { DEFAULT_MAILBOX_OPTIONS, type MailboxOptions } from './mailbox';
export {
  NotInfluenceReceiveTimeout,
  PoisonPill,
  ReceiveTimeout,
  Restarting,
  Started,
  Stop,
  Stopped,
  Stopping,
  Terminated,
  Unwatch,
  Watch,
  type TerminatedReason,
} from './messages';
export type {
  MessageEnvelope,
  ReceiveMiddleware,
  SenderFunc,
  SenderMiddleware,
} from './middleware';
export { PID } from './pid';
export { Props, type PropsOptions, type SpawnerContext } from './props';
export type { RemoteTraffic } from './remote/internal/remote-traffic';
export { Remote, type RemoteSpawnOptions } from './remote/remote';
export {
  EndpointConnectedEvent,
  EndpointTerminatedEvent,
  type UndecodableMessage,
} from './remote/remote-events';
export { DEFAULT_REMOTE_LIMITS, type RemoteLimits } from './remote/remote-limits';
export {
  DEFAULT_REMOTE_OPTIONS,
  type ReconnectOptions,
  type RemoteOptions,
  type RemoteTlsOptions,
} from './remote/remote-options';
export { RootContext } from './root-context';
export {
  BYTES_TYPE_NAME,
  ERROR_TYPE_NAME,
  JSON_TYPE_NAME,
  SerializationFormat,
  SerializationRegistry,
  serialization,
  type ErrorClass,
  type SerializedMessage,
} from './serialization/serialization-registry';
export { MAX_JSON_DEPTH } from './serialization/internal/json-check';
export { TYPE_NAME, withTypeName } from './serialization/type-name';
export { AllForOneStrategy } from './supervision/all-for-one-strategy';
export { restartDecider, type Decider, type Directive } from './supervision/directive';
export {
  DEFAULT_EXPONENTIAL_BACKOFF_OPTIONS,
  ExponentialBackoffStrategy,
  type ExponentialBackoffOptions,
} from './supervision/exponential-backoff-strategy';
export {
  DEFAULT_RESTARTING_STRATEGY_OPTIONS,
  DEFAULT_SUPERVISOR_STRATEGY,
  OneForOneStrategy,
  type RestartingStrategyOptions,
} from './supervision/one-for-one-strategy';
export { RestartStatistics } from './supervision/restart-statistics';
export type { Supervisor, SupervisorStrategy } from './supervision/supervisor-strategy';
export {
  DEFAULT_TIMER_WHEEL_OPTIONS,
  TimerWheel,
  type TimerHandle,
  type TimerWheelOptions,
} from './timer-wheel';
