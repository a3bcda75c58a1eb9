/**
 * Lua scripts of RedisReminderStore. One shard's reminders are one hash, `<prefix>{<kind>/<shard>}`
 * (the hash tag keeps a shard's keys in one Redis Cluster slot): field `s<f>` holds the schedule
 * as `<gen> <t0> <json spec>`, field `t<f>` the last tick claimed and the epoch that claimed it
 * (`<tick> <epoch>`; a bare `<tick>` from version 1 reads as claimed by no epoch), where `<f>` is
 * `<id length>:<id><name>`. Beside it, `...}:e` holds the highest epoch seen for the shard (the
 * fence) and `...}:o` the outcomes of finished jobs.
 *
 * Every write by an owner checks the fence first, atomically with what it changes, exactly as
 * grain state's scripts check the writer's epoch: `{-1, storedEpoch}` means fenced.
 */

const FENCE = `
local function fence(key, epoch)
  local stored = tonumber(redis.call('GET', key))
  if stored and epoch < stored then return stored end
  if not stored or epoch > stored then redis.call('SET', key, string.format('%.17g', epoch)) end
  return nil
end
`;

/**
 * The tick of a `t<f>` value (`<tick> <epoch>` or `<tick>`), -1 when absent or not such a value
 * (written by another program, or damaged): a nil tick made the whole script fail, so one bad
 * value stopped every claim of its shard and every set of its reminder.
 */
const LAST = `
local function lastOf(v)
  if not v then return -1, nil end
  local tick, epoch = string.match(v, '^(-?%d+) ?(.*)$')
  tick = tonumber(tick)
  if not tick then return -1, nil end
  return tick, epoch
end
`;

/** KEYS: hash, fence. ARGV: epoch. → {-1, stored} or {0, HGETALL...}. */
export const LOAD_SCRIPT = `${FENCE}
local stored = fence(KEYS[2], tonumber(ARGV[1]))
if stored then return {-1, string.format('%.17g', stored)} end
return {0, redis.call('HGETALL', KEYS[1])}
`;

/**
 * LOAD_SCRIPT for several shards: KEYS: hash, fence of each shard. ARGV: the epoch of each.
 * → per shard, {-1, stored} or {0, HGETALL...}.
 */
export const LOAD_MANY_SCRIPT = `${FENCE}
local out = {}
for i = 1, #ARGV do
  local stored = fence(KEYS[2 * i], tonumber(ARGV[i]))
  if stored then out[i] = {-1, string.format('%.17g', stored)}
  else out[i] = {0, redis.call('HGETALL', KEYS[2 * i - 1])} end
end
return out
`;

/**
 * KEYS: hash, outcomes. ARGV: field, json spec. A new schedule: its generation is bumped, its
 * first tick is the one after the last claimed, a previous job outcome goes. → {gen, t0, last}.
 * A schedule whose generation cannot be read is replaced as if there was none, and a last tick
 * that cannot be read is dropped (lastOf): `set` is how a user repairs a corrupt reminder.
 * The HSET is the script's first write: Redis over maxmemory (noeviction) refuses a script at
 * its first command that grows memory, but lets one that has already written (a delete) go on,
 * so a delete first stored new reminders past the limit.
 */
export const PUT_SCRIPT = `${LAST}
local sf = 's' .. ARGV[1]
local tf = 't' .. ARGV[1]
local last = lastOf(redis.call('HGET', KEYS[1], tf))
local old = redis.call('HGET', KEYS[1], sf)
local gen = 1
local oldGen = old and tonumber(string.match(old, '^(%d+) '))
if oldGen then gen = oldGen + 1 end
local t0 = last + 1
redis.call('HSET', KEYS[1], sf, gen .. ' ' .. t0 .. ' ' .. ARGV[2])
if last < 0 then redis.call('HDEL', KEYS[1], tf) end
redis.call('HDEL', KEYS[2], ARGV[1])
return {gen, t0, last}
`;

/** KEYS: hash, outcomes. ARGV: field. → number of fields removed. */
export const REMOVE_SCRIPT = `
local n = redis.call('HDEL', KEYS[1], 's' .. ARGV[1], 't' .. ARGV[1])
return n + redis.call('HDEL', KEYS[2], ARGV[1])
`;

/**
 * KEYS: hash, fence. ARGV: epoch, then per claim: field, gen, tick. → {-1, stored} or
 * {0, code...}: 0 ok (claimed), 1 taken (that tick or a later one was claimed), 2 gone, 3 stale.
 * The same tick claimed again under the same epoch is ok again: only the owner that claimed it
 * repeats it, after the reply to its claim was lost (it has not delivered the tick).
 */
export const CLAIM_SCRIPT = `${FENCE}${LAST}
local stored = fence(KEYS[2], tonumber(ARGV[1]))
if stored then return {-1, string.format('%.17g', stored)} end
local out = {0}
for i = 2, #ARGV, 3 do
  local f = ARGV[i]
  local spec = redis.call('HGET', KEYS[1], 's' .. f)
  local code = 0
  if not spec then code = 2
  elseif tonumber(string.match(spec, '^(%d+)')) ~= tonumber(ARGV[i + 1]) then code = 3
  else
    local tick = tonumber(ARGV[i + 2])
    local last, by = lastOf(redis.call('HGET', KEYS[1], 't' .. f))
    if last > tick or (last == tick and by ~= ARGV[1]) then code = 1
    elseif last < tick then redis.call('HSET', KEYS[1], 't' .. f, tick .. ' ' .. ARGV[1]) end
  end
  out[#out + 1] = code
end
return out
`;

/**
 * KEYS: hash, fence, outcomes. ARGV: epoch, field, gen, outcome json. Records a job's outcome and
 * deletes the job if its schedule is still gen. → {-1, stored} or {0, 1 done | 0 replaced}.
 */
export const FINISH_SCRIPT = `${FENCE}
local stored = fence(KEYS[2], tonumber(ARGV[1]))
if stored then return {-1, string.format('%.17g', stored)} end
local f = ARGV[2]
local spec = redis.call('HGET', KEYS[1], 's' .. f)
if not spec or tonumber(string.match(spec, '^(%d+)')) ~= tonumber(ARGV[3]) then return {0, 0} end
redis.call('HDEL', KEYS[1], 's' .. f, 't' .. f)
redis.call('HSET', KEYS[3], f, ARGV[4])
return {0, 1}
`;
