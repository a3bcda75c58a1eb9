/** Published on the system's event stream when a stream to a peer is up (dialled or accepted). */
export class EndpointConnectedEvent {
  constructor(
    /** The peer's `host:port`. */
    readonly address: string,
  ) {}
}

/**
 * Published when a peer went away or could not be reached. Its watched actors have been
 * reported to their watchers as Terminated with why `address-terminated`, and requests waiting
 * on it rejected with `error`.
 */
export class EndpointTerminatedEvent {
  constructor(
    readonly address: string,
    readonly error: Error,
  ) {}
}

/** A user message this node could not decode, as it appears in its DeadLetterEvent. */
export interface UndecodableMessage {
  /** The wire type name nobody registered here. */
  typeName: string;
  payload: Uint8Array;
}
