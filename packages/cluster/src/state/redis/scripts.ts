/**
 * Lua scripts of RedisStateStore. Each grain's state is one hash:
 *   s = state bytes (absent after clear: a tombstone), v = version, e = shard epoch of the last
 *   write or clear.
 * Every script runs atomically in Redis, so the checks and the update cannot interleave with
 * another writer. Replies: `{0, newVersion}` done, `{1, storedVersion or -1}` version conflict,
 * `{2, storedEpoch}` epoch conflict (checked first: a stale owner is the more basic fault).
 */

/** KEYS[1] the hash; ARGV[1] expected version ('' = none); ARGV[2] the writer's epoch. */
const CHECK = `
local key = KEYS[1]
local meta = redis.call('HMGET', key, 'v', 'e')
local version = tonumber(meta[1])
local stored = tonumber(meta[2])
if stored and tonumber(ARGV[2]) < stored then return {2, stored} end
local live = -1
if version and redis.call('HEXISTS', key, 's') == 1 then live = version end
local expected = -1
if ARGV[1] ~= '' then expected = tonumber(ARGV[1]) end
if live ~= expected then return {1, live} end
local nextVersion = (version or 0) + 1
`;

/** ARGV[3] the state bytes. PERSIST: a write revives a tombstone that had a TTL. */
export const WRITE_SCRIPT = `${CHECK}
redis.call('HSET', key, 's', ARGV[3], 'v', nextVersion, 'e', ARGV[2])
redis.call('PERSIST', key)
return {0, nextVersion}
`;

/** ARGV[3] tombstone TTL in ms (0 = keep the tombstone). */
export const CLEAR_SCRIPT = `${CHECK}
redis.call('HDEL', key, 's')
redis.call('HSET', key, 'v', nextVersion, 'e', ARGV[2])
local ttl = tonumber(ARGV[3])
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
return {0, nextVersion}
`;

/** Reply codes of both scripts. */
export const REPLY_OK = 0;
export const REPLY_VERSION_CONFLICT = 1;
export const REPLY_EPOCH_CONFLICT = 2;
