import { GranaryError, registerErrorClasses } from '@granary/core';

/** Base of every error of @granary/admin. */
export class AdminError extends GranaryError {
  static override readonly code: string = 'ERR_ADMIN';
  override readonly name: string = 'AdminError';
}

/**
 * An admin request from a peer was refused: malformed, or from an address that is not a member
 * of this cluster (operator actions come only from members).
 */
export class AdminRequestRefusedError extends AdminError {
  static override readonly code = 'ERR_ADMIN_REFUSED';
  override readonly name = 'AdminRequestRefusedError';
}

/**
 * The admin API cannot start as asked: no ops server to mount on, or a non-loopback address
 * without an explicit token (a generated one would be printed to whoever reads the logs).
 */
export class AdminConfigError extends AdminError {
  static override readonly code = 'ERR_ADMIN_CONFIG';
  override readonly name = 'AdminConfigError';
}

registerErrorClasses(AdminError, AdminRequestRefusedError, AdminConfigError);
