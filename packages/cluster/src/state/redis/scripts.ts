/**
 * Lua scripts of RedisStateStore. Each grain's state is one hash:
 *   s = state bytes (absent after clear: a tombstone), v = version, e = shard epoch of the last
 *   write or clear, l = lost mark: the newest version known to have been acknowledged, set when
 *   the store was found holding an older one (see docs/durability.md).
 * Every script runs atomically in Redis, so the checks and the update cannot interleave with
 * another writer. Replies: `{0, newVersion}` done, `{1, storedVersion or -1}` version conflict,
 * `{2, storedEpoch}` epoch conflict (checked first: a stale owner is the more basic fault),
 * `{4, storedVersion or -1, seen}` lost state detected now (the writer expected a version the
 * store no longer has: versions only grow, so the store went back), `{5, storedVersion or -1,
 * seen}` the grain carries a lost mark from an earlier detection.
 */

/**
 * check(key, expected version (-1: none), writer's epoch) → code, value, third. On code 0, value
 * is the next version and third the live version (-1: no live state); on 4 and 5, third is the
 * newest acknowledged version. Numbers given to redis.call are stored as exact integers (Redis
 * formats them with %.17g), so epochs up to 2^53 round-trip. A regression marks the key (and
 * PERSISTs it: a tombstone's TTL must not expire the mark) in the same atomic step, so no other
 * writer can build on the older state in between.
 */
const CHECK = `
local function check(key, expected, epoch)
  local meta = redis.call('HMGET', key, 'v', 'e', 'l')
  local version = tonumber(meta[1])
  local stored = tonumber(meta[2])
  if stored and epoch < stored then return 2, stored end
  local lost = tonumber(meta[3])
  if lost then return 5, version or -1, lost end
  local live = -1
  if version and redis.call('HEXISTS', key, 's') == 1 then live = version end
  if live ~= expected then
    if expected >= 0 and (version or -1) < expected then
      redis.call('HSET', key, 'l', expected)
      redis.call('PERSIST', key)
      return 4, version or -1, expected
    end
    return 1, live
  end
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
  if code ~= 0 then return code, value, live end
  redis.call('HSET', key, 's', bytes, 'v', value, 'e', epoch)
  if live == -1 then redis.call('PERSIST', key) end
  return 0, value
end
`;

/** KEYS[1] the hash; ARGV[1] expected version ('' = none); ARGV[2] the epoch; ARGV[3] bytes. */
export const WRITE_SCRIPT = `${WRITE}
local code, value, seen = write(KEYS[1], expectedOf(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
return {code, value, seen}
`;

/**
 * Many independent writes in one call (RedisStateStore's write batching). KEYS[i] is the i-th
 * grain; ARGV[1] packs one record per key (see write-batch-codec.ts): expected version (-1:
 * none) and epoch as big-endian doubles, then the state as a 32-bit length and the bytes. One
 * packed argument instead of three per write keeps both the client's command encoding and
 * Redis' argument parsing per batch, not per write.
 *
 * Each write is checked and applied on its own, in order, exactly as if sent as WRITE_SCRIPT
 * one after the other. The reply packs per key a code byte and the value as a double (codes 4
 * and 5 add the seen version as a second double); a Redis
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
  local ok, code, value, seen = pcall(write, KEYS[i], expected, epoch, bytes)
  if ok and code >= 4 then
    out[i] = struct.pack('>Bdd', code, value, seen)
  elseif ok then
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
local code, nextVersion, seen = check(key, expectedOf(ARGV[1]), epoch)
if code ~= 0 then return {code, nextVersion, seen} end
redis.call('HDEL', key, 's')
redis.call('HSET', key, 'v', nextVersion, 'e', epoch)
local ttl = tonumber(ARGV[3])
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
return {0, nextVersion}
`;

/**
 * read(key, maxStateBytes) → the fields s, v, l, e (HMGET), or the state's length alone when it
 * is over maxStateBytes: a value put under the key by another program is never sent whole.
 */
export const READ_SCRIPT = `
local length = redis.call('HSTRLEN', KEYS[1], 's')
if length > tonumber(ARGV[1]) then return length end
return redis.call('HMGET', KEYS[1], 's', 'v', 'l', 'e')
`;

/** Reply codes of the scripts. */
export const REPLY_OK = 0;
export const REPLY_VERSION_CONFLICT = 1;
export const REPLY_EPOCH_CONFLICT = 2;
/** WRITE_MANY_SCRIPT only: Redis refused this key's write; its error message follows. */
export const REPLY_ERROR = 3;
/** The writer expected a version the store no longer has: lost state, detected (and marked) now. */
export const REPLY_LOST = 4;
/** The grain carries a lost mark from an earlier detection (refused until accepted). */
export const REPLY_MARKED = 5;

/**
 * Marks a grain lost after a read found it older than a version acknowledged before (the
 * store's own memory of acknowledged versions). KEYS[1] the hash; ARGV[1] the seen version.
 * `{0, version}`: not older after all (a write raced in; read again); `{1, version or -1,
 * seen}`: marked (the mark keeps the higher of an existing one and ARGV[1]).
 */
export const MARK_LOST_SCRIPT = `
local key = KEYS[1]
local meta = redis.call('HMGET', key, 'v', 'l')
local version = tonumber(meta[1]) or -1
local lost = tonumber(meta[2])
local seen = tonumber(ARGV[1])
if not lost and version >= seen then return {0, version} end
if lost and lost > seen then seen = lost end
redis.call('HSET', key, 'l', seen)
redis.call('PERSIST', key)
return {1, version, seen}
`;

/**
 * Accepts a grain's loss: the stored state (or none) stays, the version jumps past the newest
 * acknowledged one so versions keep growing (no remembered version flags it again), the mark
 * goes. KEYS[1] the hash; ARGV[1] a version known acknowledged elsewhere (0: none); ARGV[2] '1'
 * to write the new version even without a mark or a hash (an operator accepting one grain of a
 * store that lost everything: the grain then reads as empty instead of as lost).
 * `{1, newVersion}` resolved; `{0, version or -1}` nothing to do.
 */
export const RESOLVE_LOST_SCRIPT = `
local key = KEYS[1]
local meta = redis.call('HMGET', key, 'v', 'l')
local version = tonumber(meta[1])
local lost = tonumber(meta[2])
if not lost and (version or ARGV[2] ~= '1') then return {0, version or -1} end
version = math.max(version or 0, lost or 0, tonumber(ARGV[1])) + 1
redis.call('HSET', key, 'v', version)
redis.call('HDEL', key, 'l')
return {1, version}
`;

/**
 * The store's identity marker (a hash at `<keyPrefix>store`): id, createdAt; after a loss,
 * lostAt and lostPreviousId; accepted:<kind> per kind an operator let carry on; retired:<id>
 * per earlier id whose loss was accepted. KEYS[1] the hash; ARGV[1] the id this store instance
 * knows ('' on first use), ARGV[2] a fresh id, ARGV[3] now (ms).
 *
 * No id: first use creates one; if the instance knew one, the data is gone: lost. A different
 * id than the one known, not retired by an accepted loss: another instance recreated the marker
 * after a loss (perhaps without knowing it was one): lost. Reply: {status, id, lostAt or '',
 * lostPreviousId or '', accepted kinds...}, status 'created' | 'same' | 'gone' | 'changed'.
 */
export const IDENTITY_SCRIPT = `
local key = KEYS[1]
local known = ARGV[1]
local id = redis.call('HGET', key, 'id')
local status = 'same'
if not id then
  id = ARGV[2]
  redis.call('HSET', key, 'id', id, 'createdAt', ARGV[3])
  if known == '' then status = 'created' else status = 'gone' end
elseif known ~= '' and id ~= known then
  status = 'changed'
end
if (status == 'gone' or status == 'changed') and redis.call('HEXISTS', key, 'retired:' .. known) == 0 then
  if redis.call('HEXISTS', key, 'lostAt') == 0 then
    redis.call('HSET', key, 'lostAt', ARGV[3], 'lostPreviousId', known)
  end
end
local meta = redis.call('HMGET', key, 'lostAt', 'lostPreviousId')
local out = {status, id, meta[1] or '', meta[2] or ''}
for _, field in ipairs(redis.call('HKEYS', key)) do
  if string.sub(field, 1, 9) == 'accepted:' then out[#out + 1] = string.sub(field, 10) end
end
return out
`;

/**
 * Accepts a store-wide loss. KEYS[1] the identity hash; ARGV[1] a kind ('' = every kind), ARGV[2]
 * now. For one kind: records accepted:<kind>. For all: retires the lost id and clears the loss.
 * Reply: 1 if there was a loss to accept, else 0.
 */
export const ACCEPT_STORE_LOSS_SCRIPT = `
local key = KEYS[1]
local previous = redis.call('HGET', key, 'lostPreviousId')
if not previous then return 0 end
if ARGV[1] ~= '' then
  redis.call('HSET', key, 'accepted:' .. ARGV[1], ARGV[2])
  return 1
end
redis.call('HSET', key, 'retired:' .. previous, ARGV[2])
redis.call('HDEL', key, 'lostAt', 'lostPreviousId')
for _, field in ipairs(redis.call('HKEYS', key)) do
  if string.sub(field, 1, 9) == 'accepted:' then redis.call('HDEL', key, field) end
end
return 1
`;
