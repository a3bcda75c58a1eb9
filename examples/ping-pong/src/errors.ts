import { GranaryError, registerErrorClasses } from '@granary/core';

/**
 * A bad or missing environment variable. The message names the variable, so a node that fails
 * to start says exactly what to fix (`GRANARY_ETCD is required when GRANARY_PROVIDER=etcd`).
 * Like every Granary error it has a fixed name and code; match it with `ConfigError.is(err)`.
 */
export class ConfigError extends GranaryError {
  static override readonly code = 'ERR_CONFIG';
  override readonly name = 'ConfigError';

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
export class DemoOptionError extends GranaryError {
  static override readonly code = 'ERR_DEMO_OPTION';
  override readonly name = 'DemoOptionError';

  constructor(
    /** The option at fault, e.g. `--seconds`. */
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
}

registerErrorClasses(ConfigError, DemoOptionError);
