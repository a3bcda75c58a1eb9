import type * as net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '@granary/core';
import { ConnectionGuard, EventLog, type ConnectionGuardNames } from '@granary/core/internal';

/** One summary line per kind of refusal per this interval, as the remote logs its own. */
const GATEWAY_LOG_INTERVAL_MS = 10_000;

/** The gateway's names in what the guard logs: its bounds are GrpcGatewayOptions fields. */
const GATEWAY_NAMES: ConnectionGuardNames = {
  server: 'gateway',
  option: (key) => key,
  use: 'whole call',
};

/** A gateway's server bound behind core's ConnectionGuard. */
export interface CappedListener {
  readonly guard: ConnectionGuard;
  readonly events: EventLog;
  readonly port: number;
}

/**
 * Accepts the gateway's TCP connections through core's ConnectionGuard (the remote port's) and
 * hands them to grpc-js, so at most `maxConnections` are open: grpc-js' own `bindAsync` accepts
 * every socket, each a file descriptor the member's connections share. At the bound the oldest
 * connection not yet proven (`guard.proven`: it sent a whole call) makes room for a new one, and
 * only when every open one is proven is the new one closed as it arrives (both counted as
 * `refusedConnections`, logged throttled). One not proven within `idleConnectionTimeoutMs` is
 * closed here: grpc-js' own idle timer (`grpc.max_connection_idle_ms`, which closes proven ones
 * between calls) starts only with an HTTP/2 session, so a TLS socket that never finished its
 * handshake was kept for Node's TLS handshakeTimeout (120 s), one without ALPN for 10 s.
 */
export async function listenCapped(
  server: grpc.Server,
  credentials: grpc.ServerCredentials,
  host: string,
  port: number,
  limits: { maxConnections: number; idleConnectionTimeoutMs: number },
  logger: Logger,
): Promise<CappedListener> {
  const injector = server.createConnectionInjector(credentials);
  const events = new EventLog(logger, GATEWAY_LOG_INTERVAL_MS);
  const guard = new ConnectionGuard(
    { ...limits, evictUnprovenAtMax: true },
    (socket: net.Socket) => injector.injectConnection(socket),
    events,
    GATEWAY_NAMES,
  );
  try {
    return { guard, events, port: await guard.listen(host, port) };
  } catch (err) {
    events.close();
    injector.destroy();
    throw err;
  }
}
