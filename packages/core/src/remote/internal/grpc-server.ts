import type * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { ConnectionGuard } from './connection-guard';
import { serverCredentials } from './credentials';
import type { EventLog } from './event-log';
import { serverOptions } from './grpc-options';
import type { ResolvedRemoteOptions } from './resolve-options';
import { CONNECT_METHOD } from './wire';

/** How long a graceful server shutdown may wait for peers to end their streams. */
const SERVER_SHUTDOWN_GRACE_MS = 2000;

const identity = (bytes: Buffer): Buffer => bytes;

/** A bound gRPC server, the guard in front of it, and the port it listens on. */
export interface ListeningServer {
  server: grpc.Server;
  guard: ConnectionGuard;
  port: number;
}

/**
 * Builds the gRPC server peers dial (one bidirectional `Connect` method, raw frames both ways)
 * and binds it behind a ConnectionGuard at `config.host:config.port`; every accepted stream goes
 * to `accept`.
 */
export async function listenServer(
  config: ResolvedRemoteOptions,
  accept: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void,
  events: EventLog,
): Promise<ListeningServer> {
  const server = new grpc.Server(serverOptions(config.limits));
  server.addService(
    {
      Connect: {
        path: CONNECT_METHOD,
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    { Connect: accept },
  );
  const injector = server.createConnectionInjector(serverCredentials(config.tls));
  const guard = new ConnectionGuard(
    config.limits,
    (socket: net.Socket) => injector.injectConnection(socket),
    events,
  );
  const port = await guard.listen(config.host, config.port);
  return { server, guard, port };
}

/**
 * Stops the server gracefully, forcing it after SERVER_SHUTDOWN_GRACE_MS, then closes its guard.
 */
export async function closeServer(
  server: grpc.Server,
  guard: ConnectionGuard | undefined,
): Promise<void> {
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, SERVER_SHUTDOWN_GRACE_MS);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
  await guard?.close();
}
