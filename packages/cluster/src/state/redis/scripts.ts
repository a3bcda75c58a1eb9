/**
 * Lua scripts of RedisStateStore. Each grain's state is one hash:
 *   s = state bytes (absent after clear: a tombstone), v = version, e = shard epoch of the last
 *   write or clear.
 * Every script runs atomically in Redis, so the checks and the update cannot interleave with
 * another writer. Replies: `{0, newVersion}` done, `{1, storedVersion or -1}` version conflict,
 * `{2, storedEpoch}` epoch conflict (checked first: a stale owner is the more basic fault).
 */

/**
 * check(key, expected version (-1: none), writer's epoch) → code, value, live version (-1: no
 * live state). On code 0, value is the next version. Numbers given to redis.call are stored as
 * exact integers (Redis formats them with %.17g), so epochs up to 2^53 round-trip.
 */
const CHECK = `
local function check(key, expected, epoch)
  local meta = redis.call('HMGET', key, 'v', 'e')
  local version = tonumber(meta[1])
  local stored = tonumber(meta[2])
  if stored and epoch < stored then return 2, stored end
  local live = -1
  if version and redis.call('HEXISTS', key, 's') == 1 then live = version end
  if live ~= expected then return 1, live end
  return 0, (version or 0) + 1, live
end
local function expectedOf(arg)
  if arg == '' then return -1 end
  return tonumber(arg)
end
`;

/**
 * write(key, expected, epoch, bytes) → code, value. Only a key without live state (new, or a
 * tombstone) can carry a TTL (clear sets it, every write removes it), so PERSIST runs only then.
 */
const WRITE = `${CHECK}
local function write(key, expected, epoch, bytes)
  local code, value, live = check(key, expected, epoch)
  if code ~= 0 then return code, value end
  redis.call('HSET', key, 's', bytes, 'v', value, 'e', epoch)
  if live == -1 then redis.call('PERSIST', key) end
  return 0, value
end
`;

/** KEYS[1] the hash; ARGV[1] expected version ('' = none); ARGV[2] the epoch; ARGV[3] bytes. */
export const WRITE_SCRIPT = `${WRITE}
local code, value = write(KEYS[1], expectedOf(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return {code, value}
`;

/**
 * Many independent writes in one call (RedisStateStore's write batching). KEYS[i] is the i-th
 * grain; ARGV[1] packs one record per key (see write-batch-codec.ts): expected version (-1:
 * none) and epoch as big-endian doubles, then the state as a 32-bit length and the bytes. One
 * packed argument instead of three per write keeps both the client's command encoding and
 * Redis' argument parsing per batch, not per write.
 *
 * Each write is checked and applied on its own, in order, exactly as if sent as WRITE_SCRIPT
 * one after the other. The reply packs per key a code byte and the value as a double; a Redis
 * error on one key (a foreign value of another type under the prefix) is caught and becomes
 * code REPLY_ERROR followed by the message (32-bit length, bytes) for that key only, so it
 * neither aborts the writes after it nor hides that the ones before it were applied.
 */
export const WRITE_MANY_SCRIPT = `${WRITE}
local data = ARGV[1]
local pos = 1
local out = {}
for i = 1, #KEYS do
  local expected, epoch, bytes
  expected, epoch, bytes, pos = struct.unpack('>ddI4c0', data, pos)
  local ok, code, value = pcall(write, KEYS[i], expected, epoch, bytes)
  if ok then
    out[i] = struct.pack('>Bd', code, value)
  else
    local message = code
    if type(message) == 'table' then message = message.err end
    message = tostring(message)
    out[i] = struct.pack('>BdI4', 3, 0, #message) .. message
  end
end
return table.concat(out)
`;

/** KEYS[1] the hash; ARGV[1] expected; ARGV[2] epoch; ARGV[3] tombstone TTL in ms (0 = keep). */
export const CLEAR_SCRIPT = `${CHECK}
local key = KEYS[1]
local epoch = tonumber(ARGV[2])
local code, nextVersion = check(key, expectedOf(ARGV[1]), epoch)
if code ~= 0 then return {code, nextVersion} end
redis.call('HDEL', key, 's')
redis.call('HSET', key, 'v', nextVersion, 'e', epoch)
local ttl = tonumber(ARGV[3])
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
return {0, nextVersion}
`;

/** Reply codes of the scripts. */
export const REPLY_OK = 0;
export const REPLY_VERSION_CONFLICT = 1;
export const REPLY_EPOCH_CONFLICT = 2;
/** WRITE_MANY_SCRIPT only: Redis refused this key's write; its error message follows. */
export const REPLY_ERROR = 3;
