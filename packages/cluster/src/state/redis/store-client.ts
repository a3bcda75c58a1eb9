import { Redis, type RedisOptions } from 'ioredis';
import { LOADING_RECHECK_MS, reconnectDelayMs } from './redis-state-store-options';
import type { ClusterLogger } from '../../internal/logger';
import { ReplicaRedial } from './replica-redial';

/** What a store's own client is made from (the store's resolved options). */
export interface StoreClientOptions {
  url: string;
  redisOptions?: RedisOptions | undefined;
  commandTimeoutMs: number;
  /** Names the store in log lines. */
  keyPrefix: string;
}

/**
 * The ioredis client a Redis store makes for itself (no `client` given): it reconnects with a
 * short back-off, rechecks a loading Redis often, follows a failover through `redial`, and fails
 * each command within `o.commandTimeoutMs` rather than queueing or resending it (a resent write
 * would run twice). `o.redisOptions` may change anything but those last four. Mid-failover the
 * client may land on a replica: `redial` dials again (Sentinel names the new primary), with a
 * back-off while the server stays a replica; the store closes it with the client.
 */
export function storeClient(
  o: StoreClientOptions,
  logger: ClusterLogger,
): { client: Redis; redial: ReplicaRedial } {
  const redial = new ReplicaRedial(logger, { keyPrefix: o.keyPrefix });
  const client = new Redis(o.url, {
    retryStrategy: reconnectDelayMs,
    maxLoadingRetryTime: LOADING_RECHECK_MS,
    reconnectOnError: redial.onReplyError,
    // ioredis types RedisOptions.replyMapping as `X | undefined` but its constructor as `X`,
    // which exactOptionalPropertyTypes tells apart; the value passes through as given.
    ...(o.redisOptions as Omit<RedisOptions, 'replyMapping'>),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: o.commandTimeoutMs,
  });
  redial.attach(client);
  return { client, redial };
}
