import * as grpc from '@grpc/grpc-js';
import { InvalidOptionError } from '../../errors';
import type { RemoteTlsOptions } from '../remote-options';

function buf(value: string | Buffer | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/** Server credentials: insecure without TLS, else TLS (mutual when requireClientCert). */
export function serverCredentials(tls: RemoteTlsOptions | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  const cert = buf(tls.cert);
  const key = buf(tls.key);
  if (!cert || !key)
    throw new InvalidOptionError('tls', 'tls.cert and tls.key are required to serve TLS');
  return grpc.ServerCredentials.createSsl(
    buf(tls.ca),
    [{ cert_chain: cert, private_key: key }],
    tls.requireClientCert ?? false,
  );
}

/** Channel credentials for dialling a peer; presents our certificate when we have one. */
export function channelCredentials(tls: RemoteTlsOptions | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(buf(tls.ca), buf(tls.key), buf(tls.cert));
}
