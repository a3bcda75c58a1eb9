import type { PeerCertificate } from 'node:tls';
import { checkServerIdentity } from 'node:tls';

/** Longest member id, address or cluster name a handshake may state. */
export const MAX_IDENTITY_BYTES = 256;

/** The host of `host:port` (brackets of an IPv6 host removed); undefined if it has no port. */
export function hostOf(address: string): string | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return m[1] ?? m[2];
}

/**
 * Why a stated identity is malformed (undefined when it is fine): an address must be
 * `host:port`, and every field non-empty and at most MAX_IDENTITY_BYTES.
 */
export function identityProblem(memberId: string, address: string): string | undefined {
  if (hostOf(address) === undefined) return `address '${clip(address)}' is not host:port`;
  for (const [name, value] of [
    ['member id', memberId],
    ['address', address],
  ] as const) {
    if (value.length === 0) return `the ${name} is empty`;
    if (Buffer.byteLength(value) > MAX_IDENTITY_BYTES)
      return `the ${name} is over ${MAX_IDENTITY_BYTES} bytes`;
  }
  return undefined;
}

/**
 * True when a TLS certificate names the host of `address` or the member id: in a DNS or IP
 * subject alternative name (wildcards as TLS allows them), or as the subject's common name.
 * What binds a peer's stated identity to the certificate it was authenticated with.
 */
export function certificateCovers(
  cert: PeerCertificate,
  address: string,
  memberId: string,
): boolean {
  const host = hostOf(address);
  if (host !== undefined && checkServerIdentity(host, cert) === undefined) return true;
  if (checkServerIdentity(memberId, cert) === undefined) return true;
  const cn = cert.subject?.CN;
  return cn === memberId || (host !== undefined && cn === host);
}

function clip(value: string): string {
  return value.length > 64 ? `${value.slice(0, 64)}...` : value;
}
