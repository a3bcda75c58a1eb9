import { status } from '@grpc/grpc-js';

/** What a Granary error carries that the status is chosen by (matched by code, not class). */
interface Coded {
  code?: unknown;
  originalCode?: unknown;
  message?: unknown;
}

/**
 * gRPC status of each Granary error code a call can end with. The grain's own errors
 * (`ERR_GRAIN`) are `UNKNOWN`, as gRPC servers answer an application's exception, unless what
 * the grain threw has a status of its own here (an unimplemented rpc, an undecodable request).
 */
const STATUS_OF_CODE: Readonly<Record<string, status>> = {
  ERR_DEADLINE_EXCEEDED: status.DEADLINE_EXCEEDED,
  ERR_TIMEOUT: status.DEADLINE_EXCEEDED,
  ERR_ABORTED: status.CANCELLED,
  ERR_UNIMPLEMENTED: status.UNIMPLEMENTED,
  ERR_PAYLOAD_DECODE: status.INVALID_ARGUMENT,
  ERR_INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  ERR_UNKNOWN_KIND: status.NOT_FOUND,
  ERR_ACTIVATION_DENIED: status.PERMISSION_DENIED,
  ERR_INCONSISTENT_STATE: status.ABORTED,
  ERR_DEADLOCK: status.ABORTED,
  ERR_STATE_UNAVAILABLE: status.UNAVAILABLE,
  ERR_NO_HOST: status.UNAVAILABLE,
  ERR_MEMBER_FENCED: status.UNAVAILABLE,
  ERR_ENDPOINT_UNAVAILABLE: status.UNAVAILABLE,
  ERR_CLUSTER_STOPPED: status.UNAVAILABLE,
  ERR_SHUTDOWN: status.UNAVAILABLE,
  ERR_MESSAGE_TOO_LARGE: status.RESOURCE_EXHAUSTED,
  ERR_GATEWAY_LIMIT: status.RESOURCE_EXHAUSTED,
  ERR_NO_TRANSPORT: status.FAILED_PRECONDITION,
  ERR_MAILBOX_FULL: status.RESOURCE_EXHAUSTED,
  ERR_OVERLOADED: status.RESOURCE_EXHAUSTED,
  ERR_CALL_OUTCOME_UNKNOWN: status.UNKNOWN,
  ERR_TURN_TIMEOUT: status.DEADLINE_EXCEEDED,
  ERR_STATE_DECODE: status.DATA_LOSS,
  ERR_STATE_LOST: status.DATA_LOSS,
  // Redis out of memory or unable to persist ("the entire file system is out of space").
  ERR_STATE_WRITE_REFUSED: status.RESOURCE_EXHAUSTED,
  // A grain's state over its store's maxStateBytes, written or found stored.
  ERR_STATE_TOO_LARGE: status.RESOURCE_EXHAUSTED,
};

/** A gRPC error status for a failed grain call. */
export interface GatewayStatus {
  code: status;
  /** `[ERR_CODE] message`: the Granary code first, so any client can read it. */
  details: string;
  /** The Granary code (`granary-error-code` trailer), and what a grain threw, if it did. */
  errorCode: string;
  originalCode: string | undefined;
}

/** The gRPC status a gateway answers for `err`, a grain call's failure. */
export function grpcStatusOf(err: unknown): GatewayStatus {
  const e = (typeof err === 'object' && err !== null ? err : {}) as Coded;
  const code = typeof e.code === 'string' ? e.code : 'ERR_INTERNAL';
  const original = typeof e.originalCode === 'string' ? e.originalCode : undefined;
  const message = typeof e.message === 'string' ? e.message : String(err);
  let grpc: status;
  if (code === 'ERR_GRAIN') {
    grpc = (original === undefined ? undefined : STATUS_OF_CODE[original]) ?? status.UNKNOWN;
  } else grpc = STATUS_OF_CODE[code] ?? status.INTERNAL;
  return { code: grpc, details: `[${code}] ${message}`, errorCode: code, originalCode: original };
}
