import { availableParallelism } from 'node:os';
import { InvalidOptionError } from '@granary/core';
import { rejectUnknownOptions } from '@granary/core/internal';

/** Options of {@link threaded}. */
export interface ThreadedOptions {
  /**
   * The handler's module: an absolute path (e.g. `require.resolve('./resize-task')`) or a
   * specifier a worker thread can `require`. Compiled JavaScript: worker threads load no
   * TypeScript. Required.
   */
  module: string;
  /**
   * The export of `module` that is the handler (a {@link ThreadHandler}).
   * @default 'handler' (else the module's default export)
   */
  export?: string;
  /**
   * Worker threads per member for this kind: at most this many of its turns run at once on a
   * member; the rest wait in order (dropped when their deadline passes).
   * @default availableParallelism() - 1 (at least 1): the main loop keeps a core
   */
  threads?: number;
  /**
   * A thread idle this long exits (a new one starts on demand, ~30 ms).
   * @default 30000
   */
  idleTimeoutMs?: number;
  /**
   * Heap limit of each thread, in MiB (worker_threads' `resourceLimits.maxOldGenerationSizeMb`).
   * A handler that outgrows it ends its thread: the call fails with ThreadCrashedError and a new
   * thread takes the next task. Without it a runaway handler grows to the process's own heap
   * limit (about 4 GiB on a 64-bit machine) before it dies, which a container with less memory
   * than that does not survive: set it below the memory the member may use.
   * @default undefined (Node's limit)
   */
  maxHeapMb?: number | undefined;
}

/** Defaults of {@link ThreadedOptions} (threads is computed from the machine). */
export const DEFAULT_THREADED_OPTIONS = {
  export: 'handler',
  idleTimeoutMs: 30_000,
} as const;

/** ThreadedOptions with every default applied. */
export type ResolvedThreadedOptions = Required<Omit<ThreadedOptions, 'maxHeapMb'>> &
  Pick<ThreadedOptions, 'maxHeapMb'>;

/** Every option threaded() knows (the compiler keeps it in step with ThreadedOptions). */
const THREADED_OPTION_KEYS = {
  module: true,
  export: true,
  threads: true,
  idleTimeoutMs: true,
  maxHeapMb: true,
} as const satisfies Record<keyof ThreadedOptions, true>;

/** Below this a worker thread cannot start its runtime. */
const MIN_HEAP_MB = 16;

/** Applies the defaults and validates; throws InvalidOptionError naming the option. */
export function resolveThreadedOptions(options: ThreadedOptions): ResolvedThreadedOptions {
  if (typeof options?.module !== 'string' || options.module.length === 0) {
    throw new InvalidOptionError('module', 'threaded() needs the path of the handler module');
  }
  // { maxHeapMB: 512 } left every thread unbounded, { thread: 2 } ran one per core.
  rejectUnknownOptions('threaded()', options, THREADED_OPTION_KEYS);
  const threads = options.threads ?? Math.max(1, availableParallelism() - 1);
  if (!Number.isInteger(threads) || threads < 1) {
    throw new InvalidOptionError('threads', `must be an integer >= 1, got ${threads}`);
  }
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_THREADED_OPTIONS.idleTimeoutMs;
  if (!(idleTimeoutMs >= 0)) {
    throw new InvalidOptionError('idleTimeoutMs', `must be >= 0, got ${idleTimeoutMs}`);
  }
  const maxHeapMb = options.maxHeapMb;
  if (maxHeapMb !== undefined && !(Number.isFinite(maxHeapMb) && maxHeapMb >= MIN_HEAP_MB)) {
    throw new InvalidOptionError(
      'maxHeapMb',
      `must be a number >= ${MIN_HEAP_MB}, got ${maxHeapMb}`,
    );
  }
  return {
    module: options.module,
    export: options.export ?? DEFAULT_THREADED_OPTIONS.export,
    threads,
    idleTimeoutMs,
    maxHeapMb,
  };
}
