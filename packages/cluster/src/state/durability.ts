/**
 * What an acknowledged write survives; docs/durability.md has the table with measured figures.
 *
 * - `'none'`: nothing is checked or awaited: a Redis restart without persistence loses every
 *   acknowledged write (the loss is still detected, see StateLostError). Say it explicitly, as
 *   `insecure` is said for the transport.
 * - `'restart'` (the default): a Redis process crash or restart. The server must run with its
 *   append-only file (`appendonly yes`) and write each command to it before it replies:
 *   `appendfsync always` or `no`. Not `everysec` (Redis' default): while a background fsync is
 *   still running, Redis holds new writes in memory up to 2 s and replies anyway, so a killed
 *   process loses them. A host crash may lose what the kernel had not yet written to disk (up
 *   to about 30 s with `no`, nothing with `always`).
 * - `'fsync'`: a host crash or power loss. The server fsyncs before it replies
 *   (`appendfsync always`), or, from Redis 7.2, the store awaits `WAITAOF 1 0` once per write
 *   batch.
 * - `'replicated'`: the loss of the primary (a failover). The store awaits `WAIT <replicas>`
 *   once per write batch, on top of `'restart'` (and its `appendfsync`) (a primary restarting empty would empty its
 *   replicas too).
 */
export type Durability = 'none' | 'restart' | 'fsync' | 'replicated';

/** Every level, weakest first (`'fsync'` and `'replicated'` each add to `'restart'`). */
export const DURABILITY_LEVELS: readonly Durability[] = ['none', 'restart', 'fsync', 'replicated'];

/**
 * What a kind does with a grain whose stored state was found older than acknowledged:
 * - `'refuse'` (the default): the grain fails every call with StateLostError until an operator
 *   accepts the loss through the store's API;
 * - `'accept'`: the loss is logged and counted, and the grain carries on from what the store
 *   holds (a cache, a session: state that may go back without harm).
 * Either way the call that detected the loss fails with StateLostError.
 */
export type StateLostPolicy = 'refuse' | 'accept';
