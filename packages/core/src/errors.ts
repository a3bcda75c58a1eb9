/**
 * Core's error classes, one module to import them from. Each family has its own file: the base
 * (`granary-error.ts`), what a send or request meets in this process (`call-errors.ts`), refused
 * options and arguments (`invalid-input-errors.ts`), the connection to a peer (`link-errors.ts`),
 * what a message cannot be (`message-errors.ts`), and the table of classes by code
 * (`error-registry.ts`), which registers all of them.
 */
export {
  GranaryError,
  RemoteError,
  errorData,
  errorFromData,
  hasCode,
  type ErrorClass,
  type ErrorData,
} from './granary-error';
export {
  AbortError,
  DeadLetterError,
  MailboxFullError,
  NameExistsError,
  SystemShutdownError,
  TimeoutError,
} from './call-errors';
export { InvalidArgumentError, InvalidOptionError } from './invalid-input-errors';
export {
  EndpointUnavailableError,
  HandshakeError,
  InsecureRemoteError,
  LinkLostError,
  PeerNotReadingError,
  RemoteBackpressureError,
  RemoteLimitError,
  type HandshakeRefusal,
} from './link-errors';
export {
  MessageTooLargeError,
  SerializationError,
  UnknownKindError,
  UnknownTypeError,
} from './message-errors';
export { errorClassOf, registerErrorClasses } from './error-registry';
