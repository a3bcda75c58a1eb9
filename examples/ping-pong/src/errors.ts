/**
 * A bad or missing environment variable. The message names the variable, so a node that fails
 * to start says exactly what to fix (`GRANARY_ETCD is required when GRANARY_PROVIDER=etcd`).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'ERR_CONFIG';

  constructor(
    /** The environment variable at fault. */
    readonly variable: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A bad command-line option of the demo runner; the message names the option. */
export class DemoOptionError extends Error {
  override readonly name = 'DemoOptionError';
  readonly code = 'ERR_DEMO_OPTION';

  constructor(
    /** The option at fault, e.g. `--seconds`. */
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}
