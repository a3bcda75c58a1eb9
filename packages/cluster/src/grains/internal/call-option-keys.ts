import { InvalidArgumentError } from '@granary/core';
import { unknownOptionOf } from '@granary/core/internal';
import type { GrainCallOptions } from '../grain';

/** Every field of GrainCallOptions: the compiler checks this list against the type. */
const CALL_OPTION_KEYS = {
  timeoutMs: true,
  signal: true,
  idempotent: true,
  retries: true,
  traceContext: true,
} as const satisfies Record<keyof GrainCallOptions, true>;

/**
 * InvalidArgumentError for the first key of a grain call's options that is not an option, with
 * the one likely meant; undefined when all are. From JavaScript (or options built as `any`),
 * `{ timeout: 100 }` or `{ retry: 0 }` was ignored: the call ran on the default deadline and
 * retries. Per call with options: one walk of their own keys, a switch each (no allocation).
 */
export function strayCallOption(options: object): InvalidArgumentError | undefined {
  for (const key in options) {
    switch (key) {
      case 'timeoutMs':
      case 'signal':
      case 'idempotent':
      case 'retries':
      case 'traceContext':
        continue;
      default:
        return stray(options);
    }
  }
  return undefined;
}

function stray(options: object): InvalidArgumentError | undefined {
  const unknown = unknownOptionOf('a grain call', options, CALL_OPTION_KEYS);
  // An inherited enumerable key (for...in sees it, Object.keys does not) is not the caller's.
  return unknown === undefined
    ? undefined
    : new InvalidArgumentError(`options.${unknown.name}`, unknown.detail);
}
