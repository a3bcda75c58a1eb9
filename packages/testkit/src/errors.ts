/** Base class of every error the testkit throws; `code` is stable for matching. */
export class TestkitError extends Error {
  override name = 'TestkitError';
  readonly code: string = 'ERR_TESTKIT';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A server binary is not installed; the message names the Debian package that provides it. */
export class BinaryMissingError extends TestkitError {
  override name = 'BinaryMissingError';
  override readonly code = 'ERR_BINARY_MISSING';
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
  override name = 'ServerStartError';
  override readonly code = 'ERR_SERVER_START';
}
