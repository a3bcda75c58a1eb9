import { GranaryError, registerErrorClasses } from '@granary/core';

/** Base class of every error the testkit throws; `code` is stable for matching. */
export class TestkitError extends GranaryError {
  static override readonly code: string = 'ERR_TESTKIT';
  override readonly name: string = 'TestkitError';
}

/** A server binary is not installed; the message names the Debian package that provides it. */
export class BinaryMissingError extends TestkitError {
  static override readonly code = 'ERR_BINARY_MISSING';
  override readonly name = 'BinaryMissingError';
  constructor(
    readonly binary: string,
    readonly debianPackage: string,
  ) {
    super(
      `${binary} not found: install it with 'apt-get install -y ${debianPackage}' (.ci/run does this)`,
    );
  }
}

/** A server did not become ready in time, or exited while starting. */
export class ServerStartError extends TestkitError {
  static override readonly code = 'ERR_SERVER_START';
  override readonly name = 'ServerStartError';
}

registerErrorClasses(TestkitError, BinaryMissingError, ServerStartError);
