/**
 * Requests core dropped because their requester's deadline had passed (the requester has given
 * up: its own timer rejects it), counted by where they waited. A dropped request costs its
 * target nothing more: no decoding, no turn, no reply.
 */
export interface ExpiredDrops {
  /** Requests that expired before they left this node (in an outbound batch). */
  beforeSend: number;
  /** Requests received from another node already expired (before they were decoded). */
  onArrival: number;
}
