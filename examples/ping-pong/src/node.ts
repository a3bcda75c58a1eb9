import { readFileSync } from 'node:fs';
import {
  Cluster,
  RedisReminderStore,
  RedisStateStore,
  type ClusterRemoteOptions,
} from '@granary/cluster';
import { ActorSystem, Props } from '@granary/core';
import { GrpcGateway } from '@granary/codegen/gateway';
import type { Logger } from '@granary/core';
import type { NodeConfig } from './config';
import { digestKind, scheduleDigest } from './digest';
import { pongerKind } from './gen/protos.granary';
import { Pinger } from './pinger';
import { Ponger, pongerState } from './ponger';
import { createProvider } from './provider';
import { startTelemetry } from './telemetry';

/** A running node: its cluster member and how to leave. */
export interface RunningNode {
  cluster: Cluster;
  /** The gRPC gateway of a ponger node started with GRANARY_GATEWAY_PORT. */
  gateway: GrpcGateway | undefined;
  /** Leaves the cluster gracefully (grains hand over) and stops the actor system. */
  stop(): Promise<void>;
}

/**
 * Starts one node of the example: a member of the cluster that hosts the Ponger kind (role
 * `ponger`), hosts nothing but runs the pinger actor (role `pinger`), or only keeps the member
 * table for the others (role `seed`, seed provider).
 */
export async function startNode(
  config: NodeConfig,
  log: Logger,
  libraryLog: Logger = log,
): Promise<RunningNode> {
  // The SDK first: the cluster takes its meter at start.
  const telemetry = startTelemetry(config);
  // Our own system, so the runtime's warnings come out in the node's log format.
  const system = new ActorSystem({ name: config.nodeId, logger: libraryLog });
  const store =
    config.role === 'ponger' && config.redis !== undefined
      ? new RedisStateStore({ url: config.redis })
      : undefined;
  // With Redis, ponger nodes also keep durable reminders: a digest grain per ponger id wakes
  // every 4 s, passivated between fires (src/digest.ts).
  const reminderStore =
    config.role === 'ponger' && config.redis !== undefined
      ? new RedisReminderStore({ url: config.redis })
      : undefined;
  const closeStores = async (): Promise<void> => {
    await store?.close();
    await reminderStore?.close();
  };
  const kinds =
    config.role === 'ponger'
      ? [
          pongerKind(() => new Ponger(log, store !== undefined), {
            idleTimeoutMs: config.idleTimeoutMs,
            state: store && pongerState(store),
          }),
          ...(reminderStore ? [digestKind(log)] : []),
        ]
      : [];
  let cluster: Cluster;
  try {
    cluster = await Cluster.start({
      name: config.cluster,
      id: config.nodeId,
      provider: createProvider(config, libraryLog),
      kinds,
      // The store checks at start that Redis keeps acknowledged writes (durability 'restart').
      stateStores: store ? [store] : [],
      // The reminders' store is checked the same way (durability 'restart').
      reminders: reminderStore && { store: reminderStore },
      system,
      remote: remoteOptions(config),
      logger: libraryLog,
      ops:
        config.opsPort === undefined
          ? undefined
          : { port: config.opsPort, host: config.opsHost, prometheus: telemetry.prometheus },
    });
  } catch (err) {
    await system.shutdown();
    await closeStores();
    await telemetry.shutdown();
    throw err;
  }
  if (reminderStore) {
    // Every ponger node asks; the first sets it, the others find it (a restart keeps its ticks).
    await scheduleDigest(cluster, config.pongerId).catch((err: unknown) =>
      log.warn({ err }, 'could not set the digest reminder'),
    );
  }
  let gateway: GrpcGateway | undefined;
  if (config.role === 'ponger' && config.gatewayPort !== undefined) {
    try {
      gateway = await GrpcGateway.start({
        cluster,
        host: config.host,
        port: config.gatewayPort,
        insecure: config.insecure,
      });
      log.info({ port: gateway.port, services: gateway.services }, 'gRPC gateway listening');
    } catch (err) {
      await cluster.shutdown({ graceful: false });
      await system.shutdown();
      await closeStores();
      throw err;
    }
  }
  if (config.role === 'pinger') {
    const props = Props.fromProducer(
      () =>
        new Pinger(
          cluster,
          {
            pongerId: config.pongerId,
            intervalMs: config.pingIntervalMs,
            deadlineMs: config.pingDeadlineMs,
          },
          log,
        ),
    );
    cluster.system.root.spawnNamed(props, 'pinger');
  }
  return {
    cluster,
    gateway,
    stop: async () => {
      try {
        await gateway?.close();
        await cluster.shutdown({ graceful: true });
      } finally {
        await system.shutdown();
        await closeStores();
        await telemetry.shutdown();
      }
    },
  };
}

/** The remote transport of a node: where it listens, and its secret or mutual TLS. */
export function remoteOptions(config: NodeConfig): ClusterRemoteOptions {
  const tls = config.tls;
  return {
    host: config.host,
    port: config.port,
    advertisedHost: config.advertisedHost,
    secret: config.secret,
    insecure: config.insecure,
    tls: tls && {
      ca: readFileSync(tls.ca),
      cert: readFileSync(tls.cert),
      key: readFileSync(tls.key),
      requireClientCert: true,
    },
  };
}
