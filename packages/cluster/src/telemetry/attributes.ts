/**
 * Attribute names of Granary's spans and metrics: the stable OpenTelemetry RPC conventions
 * where they apply, `granary.*` for the rest. Metric attributes are bounded (a kind, a method,
 * an outcome, a reason): a grain's identity or activation id only ever goes on spans.
 */

/** RPC system of every grain call span: always {@link RPC_SYSTEM}. */
export const ATTR_RPC_SYSTEM_NAME = 'rpc.system.name';
/** `package.Service/Method` of a generated client's call, else the message's type. */
export const ATTR_RPC_METHOD = 'rpc.method';
/** The error code (`ERR_...`) a failed call, turn or operation ended with. */
export const ATTR_ERROR_TYPE = 'error.type';
/** Host of the member an attempt went to (client spans). */
export const ATTR_SERVER_ADDRESS = 'server.address';
/** Port of the member an attempt went to (client spans). */
export const ATTR_SERVER_PORT = 'server.port';
/** Grain kind. */
export const ATTR_GRAIN_KIND = 'granary.grain.kind';
/** Grain identity (spans only: unbounded). */
export const ATTR_GRAIN_KEY = 'granary.grain.key';
/** Activation id (spans only). */
export const ATTR_ACTIVATION_ID = 'granary.activation.id';
/** Id of the member that made the span. */
export const ATTR_NODE_ID = 'granary.node.id';
/** Epoch of the shard claim the grain runs under (the state fencing token). */
export const ATTR_SHARD_EPOCH = 'granary.shard.epoch';
/** Shard number. */
export const ATTR_SHARD = 'granary.shard';
/** Claim range number (claims and releases: a range of contiguous shards, see kind-ranges). */
export const ATTR_CLAIM_RANGE = 'granary.shard.range';
/** Time left to the call's deadline when the span started (ms). */
export const ATTR_DEADLINE_REMAINING_MS = 'granary.deadline.remaining_ms';
/** Outcome of a grain call: see {@link CallOutcome}. */
export const ATTR_CALL_OUTCOME = 'granary.call.outcome';
/** Why something ended or happened: a deactivation's or a release's reason, a retry's error. */
export const ATTR_REASON = 'granary.reason';
/** Attempt number of a retry event (the first attempt is 1). */
export const ATTR_ATTEMPT = 'granary.attempt';
/** Outcome of an operation that is not a call: ok, failed, conflict, unavailable, ... */
export const ATTR_OUTCOME = 'granary.outcome';
/** State store operation: read, write, clear. */
export const ATTR_STATE_OPERATION = 'granary.state.operation';
/** Member status (members metric). */
export const ATTR_MEMBER_STATUS = 'granary.member.status';
/** Direction of remote traffic: in, out. */
export const ATTR_DIRECTION = 'granary.direction';
/** The bound that refused a call with OverloadedError (its `limit`). */
export const ATTR_OVERLOAD_LIMIT = 'granary.overload.limit';
/** Where expired work was dropped: send, arrival, mailbox, reply. */
export const ATTR_OVERLOAD_STAGE = 'granary.overload.stage';
/** What a loaded reminder is: reminder (periodic), job (one-off). */
export const ATTR_REMINDER_TYPE = 'granary.reminder.type';
/** The reminder's name (per grain). */
export const ATTR_REMINDER_NAME = 'granary.reminder.name';
/** The tick a reminder fire delivers (a job: its attempt's tick). */
export const ATTR_REMINDER_TICK = 'granary.reminder.tick';
/** A job attempt's number (1 the first). */
export const ATTR_REMINDER_ATTEMPT = 'granary.reminder.attempt';
/** How late a fire was claimed (firedAt - dueAt), ms. */
export const ATTR_REMINDER_TARDINESS_MS = 'granary.reminder.tardiness_ms';

/** The value of `rpc.system.name`. */
export const RPC_SYSTEM = 'granary';

/**
 * How a grain call ended, as the call metrics count it: the grain answered (`ok`), the grain's
 * code threw (`app_error`), the deadline passed (`deadline_exceeded`, also when no member could
 * take the call), the owner died after the call reached it (`outcome_unknown`), or another final
 * error (`error`: a deadlock, a denied activation, an abort, a full mailbox, the member
 * stopping). `retried` counts attempts that were tried again.
 */
export type CallOutcome =
  'ok' | 'app_error' | 'deadline_exceeded' | 'outcome_unknown' | 'error' | 'retried';
