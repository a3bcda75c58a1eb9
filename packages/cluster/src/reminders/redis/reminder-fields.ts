import { ReminderCorruptError } from '../errors';
import { CATCH_UP_POLICIES, type JobOutcome } from '../reminder';
import type { ReminderSpec, StoredReminder } from '../reminder-store';
import { MIN_PERIOD_MS } from '../reminders-options';

/**
 * The fields of a shard's hash (layout in reminder-scripts.ts), and reading what
 * RedisReminderStore finds in them. Anyone who can write to the Redis can put anything there,
 * and a value can be damaged: each reminder
 * is checked on its own, so one bad value costs that reminder (a ReminderCorruptError) and not
 * its shard. Before, a spec that was not JSON threw a SyntaxError out of the shard's load, which
 * the owner took for the store being down: it retried forever, and no reminder of that batch of
 * up to 256 shards fired; a spec with a string period was planned as NaN.
 */

/** Field of a reminder in its shard's hash (without the `s`/`t` letter). */
export function fieldOf(id: string, name: string): string {
  return `${id.length}:${id}${name}`;
}

/** Escapes Redis glob characters (HSCAN MATCH). */
export function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Where a value was read: for the error's message. */
export interface StoredAt {
  readonly kind: string;
  readonly shard: number;
  readonly key: string;
}

/** A non-negative decimal integer as the scripts write it (`-1` for no tick claimed yet). */
const INTEGER = /^(?:0|[1-9][0-9]{0,15})$/;
/** A last-tick value: `<tick> <epoch>` or, from version 1, `<tick>`. */
const LAST_TICK = /^(-1|0|[1-9][0-9]{0,15})(?: \S*)?$/;
/** Longest value shown in an error message (the rest is someone else's data). */
const SHOWN_CHARS = 48;

function shown(text: string): string {
  return JSON.stringify(text.slice(0, SHOWN_CHARS)) + (text.length > SHOWN_CHARS ? '...' : '');
}

/** The grain identity and reminder name of field `<f>` (`<id length>:<id><name>`), if it parses. */
function idAndName(f: string): { id: string; name: string } | undefined {
  const colon = f.indexOf(':');
  const len = colon > 0 && INTEGER.test(f.slice(0, colon)) ? Number(f.slice(0, colon)) : -1;
  if (len < 1 || colon + 1 + len >= f.length) return undefined;
  return { id: f.slice(colon + 1, colon + 1 + len), name: f.slice(colon + 1 + len) };
}

/** Why `spec` is not a schedule `reminders.set` could have stored (undefined when it is). */
function specProblem(spec: unknown): string | undefined {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return 'not an object';
  const s = spec as Partial<Record<keyof ReminderSpec, unknown>>;
  if (!Number.isSafeInteger(s.dueAt)) return `dueAt ${shown(String(s.dueAt))} is no integer`;
  const p = s.periodMs;
  if (!(p === 0 || (Number.isSafeInteger(p) && (p as number) >= MIN_PERIOD_MS)))
    return `periodMs ${shown(String(p))} is neither 0 nor an integer >= ${MIN_PERIOD_MS}`;
  if (!CATCH_UP_POLICIES.includes(s.catchUp as never))
    return `catchUp ${shown(String(s.catchUp))} is not a policy`;
  const a = s.maxAttempts;
  if (!(Number.isSafeInteger(a) && (a as number) >= 1))
    return `maxAttempts ${shown(String(a))} is no integer >= 1`;
  const b = s.backoffMs;
  if (!(typeof b === 'number' && Number.isFinite(b) && b >= 0))
    return `backoffMs ${shown(String(b))} is no number >= 0`;
  if (s.trace !== undefined && typeof s.trace !== 'string') return 'trace is no string';
  return undefined;
}

/**
 * The reminder of field `f` (without its `s`/`t` letter), schedule value `raw`
 * (`<gen> <t0> <json spec>`) and last-tick value `last`, or the ReminderCorruptError saying what
 * is wrong with it.
 */
export function parseStored(
  at: StoredAt,
  f: string,
  raw: string,
  last: string | undefined,
): StoredReminder | ReminderCorruptError {
  const who = idAndName(f);
  const corrupt = (detail: string): ReminderCorruptError =>
    new ReminderCorruptError(at.kind, at.shard, who?.id ?? '?', who?.name ?? f, at.key, detail);
  if (who === undefined) return corrupt(`field ${shown(f)} is not <id length>:<id><name>`);
  const a = raw.indexOf(' ');
  const b = a < 0 ? -1 : raw.indexOf(' ', a + 1);
  const gen = raw.slice(0, a);
  const t0 = raw.slice(a + 1, b);
  if (b < 0 || !INTEGER.test(gen) || !INTEGER.test(t0))
    return corrupt(`schedule ${shown(raw)} is not <gen> <t0> <json spec>`);
  let spec: unknown;
  try {
    spec = JSON.parse(raw.slice(b + 1));
  } catch {
    return corrupt(`the spec in ${shown(raw)} is not JSON`);
  }
  const problem = specProblem(spec);
  if (problem !== undefined) return corrupt(`spec: ${problem}`);
  const tick = last === undefined ? undefined : LAST_TICK.exec(last);
  if (tick === null) return corrupt(`last tick ${shown(last!)} is not <tick> <epoch>`);
  return {
    id: who.id,
    name: who.name,
    gen: Number(gen),
    t0: Number(t0),
    spec: spec as ReminderSpec,
    last: tick === undefined ? -1 : Number(tick[1]),
  };
}

/**
 * The reminders of one shard from its hash's HGETALL (flat field, value pairs); each corrupt one
 * is handed to `corrupt` instead.
 */
export function parseShard(
  at: StoredAt,
  flat: readonly string[],
  corrupt: (err: ReminderCorruptError) => void,
): StoredReminder[] {
  const specs = new Map<string, string>();
  const ticks = new Map<string, string>();
  for (let i = 0; i < flat.length; i += 2) {
    const f = flat[i]!;
    // A field of neither letter is no reminder's (and no write of ours touches it).
    if (f.startsWith('s')) specs.set(f.slice(1), flat[i + 1]!);
    else if (f.startsWith('t')) ticks.set(f.slice(1), flat[i + 1]!);
  }
  const out: StoredReminder[] = [];
  for (const [f, raw] of specs) {
    const r = parseStored(at, f, raw, ticks.get(f));
    if (r instanceof ReminderCorruptError) corrupt(r);
    else out.push(r);
  }
  return out;
}

/** A job outcome as stored (JSON), or the ReminderCorruptError saying it is not one. */
export function parseOutcome(
  at: StoredAt,
  id: string,
  name: string,
  raw: string,
): JobOutcome | ReminderCorruptError {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    v = undefined;
  }
  const o = v as Partial<Record<keyof JobOutcome, unknown>> | null | undefined;
  if (
    typeof o !== 'object' ||
    o === null ||
    (o.status !== 'done' && o.status !== 'failed') ||
    typeof o.attempts !== 'number' ||
    typeof o.at !== 'number'
  ) {
    return new ReminderCorruptError(
      at.kind,
      at.shard,
      id,
      name,
      `${at.key}:o`,
      `job outcome ${shown(raw)} is not { status, attempts, at }`,
    );
  }
  return o as JobOutcome;
}
