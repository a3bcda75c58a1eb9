import { isIP } from 'node:net';
import { InsecureRemoteError, InvalidOptionError } from '../../errors';
import type { RemoteLogger } from './logger';
import type { RemoteTlsOptions } from '../remote-options';

/** Shorter secrets are guessable offline from one recorded handshake (HMAC over known nonces). */
export const MIN_SECRET_BYTES = 16;

/** True for a host only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.toLowerCase().startsWith('::ffff:')) return h.slice(7).startsWith('127.');
  return false;
}

/** True when these options authenticate every peer (a shared secret, or mutual TLS). */
export function authenticates(
  secret: string | undefined,
  tls: RemoteTlsOptions | undefined,
): boolean {
  return secret !== undefined || tls?.requireClientCert === true;
}

/**
 * Secure by default: a node that listens beyond loopback must authenticate its peers, unless
 * `insecure` says every peer that can reach the port may join (then one warning).
 * @throws InsecureRemoteError naming `secret` and `tls`; InvalidOptionError for a short secret.
 */
export function checkSecureBinding(
  options: {
    host: string;
    secret?: string | undefined;
    tls?: RemoteTlsOptions | undefined;
    insecure: boolean;
  },
  logger: RemoteLogger,
): void {
  const { host, secret, tls, insecure } = options;
  if (secret !== undefined && Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    throw new InvalidOptionError('secret', `must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  if (authenticates(secret, tls) || isLoopbackHost(host)) return;
  if (!insecure) throw new InsecureRemoteError(host);
  logger.warn(
    { host },
    'remote listens beyond loopback without authentication (insecure: true): any peer that ' +
      'reaches the port can join and send system messages',
  );
}
