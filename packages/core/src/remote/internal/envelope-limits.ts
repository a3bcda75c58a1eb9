import { RemoteLimitError } from '../../errors';
import type { ResolvedRemoteLimits } from '../remote-limits';
import { lengthDelimitedSize, utf8Length } from './byte-writer';

/** The inbound limits a receiver applies to one envelope's strings and header. */
export type EnvelopeLimits = Pick<
  ResolvedRemoteLimits,
  'maxStringBytes' | 'maxHeaderEntries' | 'maxHeaderBytes'
>;

/**
 * Why a peer would refuse an envelope with these strings and header (see batch-decoder), or
 * undefined. The receiver of a frame over its limits closes the whole link, as it must for a
 * hostile peer, and every call on that link fails with it; so an honest sender refuses the one
 * message instead, with the error the peer would have named. The sender knows only its own
 * limits: the members of one cluster share them (the defaults, or one configuration).
 *
 * Cheap for what is sent all the time: a string of n UTF-16 units is at most 3n bytes of
 * UTF-8, so only one longer than a third of the limit is measured, and a header (a grain
 * call's first attempt has none) is walked only when there is one.
 */
export function envelopeRefusal(
  targetId: string,
  typeName: string,
  senderId: string | undefined,
  header: Readonly<Record<string, string>> | undefined,
  limits: EnvelopeLimits,
): RemoteLimitError | undefined {
  const max = limits.maxStringBytes;
  const over =
    overString('target id', targetId, max) ??
    overString('type name', typeName, max) ??
    (senderId === undefined ? undefined : overString('sender id', senderId, max));
  if (over !== undefined || header === undefined) return over;
  return overHeader(header, limits);
}

/** RemoteLimitError when `value` is more than `max` bytes of UTF-8. */
export function overString(what: string, value: string, max: number): RemoteLimitError | undefined {
  if (value.length * 3 <= max) return undefined;
  const bytes = utf8Length(value);
  if (bytes <= max) return undefined;
  return new RemoteLimitError(
    'limits.maxStringBytes',
    `the ${what} is ${bytes} bytes of UTF-8, over ${max}: a peer refuses such a frame`,
  );
}

/** Entries and bytes counted as the receiver counts them: each entry's key and value fields. */
function overHeader(
  header: Readonly<Record<string, string>>,
  limits: EnvelopeLimits,
): RemoteLimitError | undefined {
  let entries = 0;
  let bytes = 0;
  for (const key in header) {
    entries++;
    bytes +=
      2 + lengthDelimitedSize(utf8Length(key)) + lengthDelimitedSize(utf8Length(header[key]!));
  }
  if (entries > limits.maxHeaderEntries) {
    return new RemoteLimitError(
      'limits.maxHeaderEntries',
      `the header has ${entries} entries, over ${limits.maxHeaderEntries}: a peer refuses such a frame`,
    );
  }
  if (bytes > limits.maxHeaderBytes) {
    return new RemoteLimitError(
      'limits.maxHeaderBytes',
      `the header is ${bytes} bytes, over ${limits.maxHeaderBytes}: a peer refuses such a frame`,
    );
  }
  return undefined;
}
