import { rejectUnknownOptions } from '@granary/core/internal';

/** Options of installShutdownSignals. */
export interface ShutdownSignalsOptions {
  /**
   * Signals that start the graceful leave.
   * @default ['SIGTERM', 'SIGINT']
   */
  signals?: NodeJS.Signals[];
  /**
   * Exit the process once the leave finished (code 0, or 1 if it failed).
   * @default true
   */
  exit?: boolean;
  /**
   * Called when the leave failed (before the exit).
   * @default undefined
   */
  onError?: (error: unknown) => void;
}

const SHUTDOWN_SIGNALS_OPTION_KEYS = {
  signals: true,
  exit: true,
  onError: true,
} as const satisfies Record<keyof ShutdownSignalsOptions, true>;

/** Anything that leaves gracefully, like a Cluster. */
export interface Shutdownable {
  /** `reason`: the signal that started the leave (a Cluster logs it). */
  shutdown(options?: { graceful?: boolean; reason?: string }): Promise<void>;
}

/**
 * Wires SIGTERM/SIGINT to a graceful `cluster.shutdown()`: status leaving, no new activations,
 * calls in flight finish, every grain deactivates, claims are released, the member key is
 * deleted, then the process exits. A second signal while leaving exits at once (code 130).
 * Returns a function that removes the handlers.
 *
 * @example
 * const cluster = await Cluster.start({ ... });
 * installShutdownSignals(cluster);
 */
export function installShutdownSignals(
  cluster: Shutdownable,
  options: ShutdownSignalsOptions = {},
): () => void {
  // From JavaScript, { signal: ['SIGUSR2'] } or { onerror } was ignored and the defaults ran.
  rejectUnknownOptions('installShutdownSignals', options, SHUTDOWN_SIGNALS_OPTION_KEYS);
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? true;
  let leaving = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (leaving) {
      if (exit) process.exit(130);
      return;
    }
    leaving = true;
    cluster.shutdown({ graceful: true, reason: signal }).then(
      () => {
        if (exit) process.exit(0);
      },
      (err: unknown) => {
        options.onError?.(err);
        if (exit) process.exit(1);
      },
    );
  };
  for (const s of signals) process.on(s, handler);
  return () => {
    for (const s of signals) process.off(s, handler);
  };
}
