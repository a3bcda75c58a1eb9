import type { Cluster, Redis } from 'ioredis';

/**
 * Whether a command given to `client` now goes out on its connection: the client is ready and
 * its socket is not closing. A store's own dial (ReplicaRedial after a READONLY,
 * SilentConnection after a silence) ends the socket, and ioredis reports 'ready' until the
 * socket's 'close' arrives a round trip later; a command sent in between failed at once with
 * "Stream isn't writeable" (no offline queue) where one sent a moment later waits for the next
 * connection (CI: a reminder write ~0.1 s after a switch-over). A Cluster client has a socket
 * per node; its status is all there is to go by.
 */
export function sendable(client: Redis | Cluster): boolean {
  if (client.status !== 'ready') return false;
  if (client.isCluster) return true;
  const stream = (client as Redis).stream as Redis['stream'] | undefined;
  return stream === undefined || (stream.writable && !stream.writableEnded);
}
