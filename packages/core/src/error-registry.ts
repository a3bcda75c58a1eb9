/**
 * The process-wide table of error classes by code, which makes errors come off the wire as
 * instances of their classes; every built-in class of core is registered here at load.
 * Re-exported by `errors.ts`.
 */
import {
  AbortError,
  DeadLetterError,
  MailboxFullError,
  NameExistsError,
  SystemShutdownError,
  TimeoutError,
} from './call-errors';
import { GranaryError, RemoteError, type ErrorClass } from './granary-error';
import { InvalidArgumentError, InvalidOptionError } from './invalid-input-errors';
import {
  EndpointUnavailableError,
  HandshakeError,
  InsecureRemoteError,
  LinkLostError,
  PeerNotReadingError,
  RemoteBackpressureError,
  RemoteLimitError,
} from './link-errors';
import {
  MessageTooLargeError,
  SerializationError,
  UnknownKindError,
  UnknownTypeError,
} from './message-errors';

/** Classes by code, for every serialization registry of this process (see registerErrorClasses). */
const known = new Map<string, ErrorClass>();

/**
 * Makes errors with these classes' codes come off the wire as instances of the classes (their
 * data fields set; the constructor is not run), so `instanceof` works as well as `is()`. Each
 * package of Granary registers its own classes; register yours the same way. A code that is
 * already registered keeps its first class: a second copy of a package loaded later, or a class
 * that reuses a built-in code, does not take it over (`is()` matches either way).
 * @throws InvalidArgumentError for a class without a static `code`.
 */
export function registerErrorClasses(...classes: ErrorClass[]): void {
  for (const errorClass of classes) {
    const code = errorClass.code;
    if (typeof code !== 'string') {
      throw new InvalidArgumentError('classes', `${errorClass.name} has no static code`);
    }
    if (!known.has(code)) known.set(code, errorClass);
  }
}

/** The class registered for `code` with {@link registerErrorClasses}, if any. */
export function errorClassOf(code: string): ErrorClass | undefined {
  return known.get(code);
}

registerErrorClasses(
  GranaryError,
  RemoteError,
  TimeoutError,
  MailboxFullError,
  DeadLetterError,
  NameExistsError,
  AbortError,
  InvalidOptionError,
  InvalidArgumentError,
  SystemShutdownError,
  EndpointUnavailableError,
  MessageTooLargeError,
  UnknownTypeError,
  HandshakeError,
  UnknownKindError,
  InsecureRemoteError,
  RemoteLimitError,
  PeerNotReadingError,
  LinkLostError,
  RemoteBackpressureError,
  SerializationError,
);
