import {
  INVALID_SPANID,
  INVALID_TRACEID,
  ROOT_CONTEXT,
  TraceFlags,
  baggageEntryMetadataFromString,
  context,
  createTraceState,
  isSpanContextValid,
  propagation,
  trace,
  type BaggageEntry,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';

/**
 * W3C Trace Context and Baggage in message headers: every actor request and grain call made
 * while a span is active (or baggage is set) carries `traceparent`, `tracestate` and `baggage`,
 * so the receiver's spans join the caller's trace across nodes.
 *
 * Written here rather than through the global propagator: the headers travel whether or not the
 * application registered one (an SDK without `register()`, a test provider), and the format is
 * the one the issue of record and every OpenTelemetry backend expect. Only `@opentelemetry/api`
 * is used (a peer dependency); without an SDK nothing is ever active and nothing is written.
 */

/**
 * The OpenTelemetry API's global registry (the key of `@opentelemetry/api` 1.x, our peer
 * dependency's major): absent until something registers a context manager, tracer, meter or
 * propagator. While it is absent `context.active()` is ROOT_CONTEXT, and asking costs a
 * registry lookup and a version check (~25 ns, a tenth of an in-process request); see
 * `activeContext`.
 */
const OTEL_API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
/** Read once: each use of an import of the API's CommonJS index is a getter call. */
const ROOT: Context = ROOT_CONTEXT;

/** `context.active()`, without asking the API while nothing is registered with it. */
function activeContext(): Context {
  return (globalThis as Record<symbol, unknown>)[OTEL_API_GLOBAL] === undefined
    ? ROOT
    : context.active();
}

/** W3C Trace Context: version, trace id, parent span id, flags. */
export const TRACEPARENT_HEADER = 'traceparent';
/** W3C Trace Context: vendor entries (sent as the span context carries them). */
export const TRACESTATE_HEADER = 'tracestate';
/** W3C Baggage: `key=value` entries, values percent-encoded. */
export const BAGGAGE_HEADER = 'baggage';

/** W3C limits of a baggage header: entries and total length. */
const MAX_BAGGAGE_ENTRIES = 180;
const MAX_BAGGAGE_LENGTH = 8192;

/** True when `ctx` carries something to propagate: a valid span context or baggage. */
export function hasTraceContext(ctx: Context): boolean {
  if (ctx === ROOT_CONTEXT) return false;
  const sc = trace.getSpanContext(ctx);
  return (sc !== undefined && isSpanContextValid(sc)) || propagation.getBaggage(ctx) !== undefined;
}

/** The `traceparent` value of a span context. */
export function traceparentOf(sc: SpanContext): string {
  const f = sc.traceFlags & 0xff;
  const flags = f === 1 ? '01' : f === 0 ? '00' : f.toString(16).padStart(2, '0');
  return `00-${sc.traceId}-${sc.spanId}-${flags}`;
}

/**
 * Writes the span context and baggage of `ctx` into `header` (W3C fields). Returns false, and
 * writes nothing, when `ctx` has neither.
 */
export function injectTraceContext(ctx: Context, header: Record<string, string>): boolean {
  if (ctx === ROOT_CONTEXT) return false;
  let wrote = false;
  const sc = trace.getSpanContext(ctx);
  if (sc !== undefined && isSpanContextValid(sc)) {
    header[TRACEPARENT_HEADER] = traceparentOf(sc);
    const state = sc.traceState?.serialize();
    if (state) header[TRACESTATE_HEADER] = state;
    wrote = true;
  }
  const baggage = propagation.getBaggage(ctx);
  if (baggage !== undefined) {
    const value = serializeBaggage(baggage.getAllEntries());
    if (value !== '') {
      header[BAGGAGE_HEADER] = value;
      wrote = true;
    }
  }
  return wrote;
}

/**
 * Writes the context of a span this process just started (`sc`: ids from the SDK, well formed)
 * as `traceparent`/`tracestate`, and the baggage of `ctx`, into `header`. Cheaper than
 * {@link injectTraceContext} of a context holding the span: no context is made and the ids are
 * not re-validated (the invalid context of a suppressed span is skipped). Returns false when
 * it wrote nothing.
 */
export function injectSpanContext(
  sc: SpanContext,
  ctx: Context,
  header: Record<string, string>,
): boolean {
  let wrote = false;
  if (sc.traceId !== INVALID_TRACEID && sc.spanId !== INVALID_SPANID) {
    header[TRACEPARENT_HEADER] = traceparentOf(sc);
    const state = sc.traceState?.serialize();
    if (state) header[TRACESTATE_HEADER] = state;
    wrote = true;
  }
  const baggage = ctx === ROOT_CONTEXT ? undefined : propagation.getBaggage(ctx);
  if (baggage !== undefined) {
    const value = serializeBaggage(baggage.getAllEntries());
    if (value !== '') {
      header[BAGGAGE_HEADER] = value;
      wrote = true;
    }
  }
  return wrote;
}

/**
 * `header` plus the trace context active now, or `header` itself (possibly undefined) when no
 * span is active and no baggage is set (the common case costs one context lookup), or when it
 * carries a trace context already (a traced grain call's own client span).
 */
export function withActiveTraceContext(
  header: Record<string, string> | undefined,
): Record<string, string> | undefined {
  const ctx = activeContext();
  if (ctx === ROOT || header?.[TRACEPARENT_HEADER] !== undefined) return header;
  if (!hasTraceContext(ctx)) return header;
  const out = header === undefined ? {} : { ...header };
  injectTraceContext(ctx, out);
  return out;
}

/**
 * The context a message's headers carry: `base` with the remote span context (from
 * `traceparent`/`tracestate`) and the baggage set, when present and well formed. Use it to
 * parent an actor's work on its caller's trace:
 *
 * @example
 * receive(ctx) {
 *   return context.with(traceContextOf(ctx.headers), () => tracer.startActiveSpan('work', ...));
 * }
 */
export function traceContextOf(
  header: Readonly<Record<string, string>> | undefined,
  base: Context = ROOT_CONTEXT,
): Context {
  if (header === undefined) return base;
  let ctx = base;
  const parent = header[TRACEPARENT_HEADER];
  if (parent !== undefined) {
    const sc = parseTraceparent(parent, header[TRACESTATE_HEADER]);
    if (sc !== undefined) ctx = trace.setSpanContext(ctx, sc);
  }
  const baggage = header[BAGGAGE_HEADER];
  if (baggage !== undefined) {
    const entries = parseBaggage(baggage);
    if (entries !== undefined)
      ctx = propagation.setBaggage(ctx, propagation.createBaggage(entries));
  }
  return ctx;
}

/**
 * The trace context to give a call that arrived from outside with `header` (a gateway's
 * incoming metadata): undefined when the active context already has a span or baggage (an
 * instrumentation's server span joined the sender's trace; the call then joins it by default),
 * else the context `header` carries, or undefined when it carries none.
 */
export function incomingTraceContext(
  header: Readonly<Record<string, string>>,
): Context | undefined {
  const active = context.active();
  if (hasTraceContext(active)) return undefined;
  const ctx = traceContextOf(header, active);
  return ctx === active ? undefined : ctx;
}

/** Length of a version-00 `traceparent`: `vv-<32 hex>-<16 hex>-ff`. */
const TRACEPARENT_LENGTH = 55;

/**
 * The remote span context of a `traceparent` value, or undefined when malformed. Checked
 * character by character rather than by a regular expression: a traced member parses one per
 * grain turn, and the match array, its five substrings and the trimmed copy cost more than the
 * turn's own telemetry (profiled in grains-calls-telemetry).
 */
export function parseTraceparent(value: string, state?: string): SpanContext | undefined {
  // Surrounding whitespace is tolerated (only a value of another length can carry any).
  const v = value.length === TRACEPARENT_LENGTH ? value : value.trim();
  const n = v.length;
  if (n < TRACEPARENT_LENGTH) return undefined;
  if (
    !isLowerHex(v, 0, 2) ||
    v.charCodeAt(2) !== DASH ||
    !isLowerHex(v, 3, 35) ||
    v.charCodeAt(35) !== DASH ||
    !isLowerHex(v, 36, 52) ||
    v.charCodeAt(52) !== DASH ||
    !isLowerHex(v, 53, 55)
  ) {
    return undefined;
  }
  const version = hexByte(v, 0);
  // Version ff is forbidden; version 00 has exactly four fields (later versions may add more,
  // after a dash).
  if (version === 0xff) return undefined;
  if (n > TRACEPARENT_LENGTH && (version === 0 || v.charCodeAt(55) !== DASH)) return undefined;
  const traceId = v.slice(3, 35);
  const spanId = v.slice(36, 52);
  // The hex digits are checked; an all-zero id is the only invalid one left.
  if (traceId === INVALID_TRACEID || spanId === INVALID_SPANID) return undefined;
  const sc: SpanContext = {
    traceId,
    spanId,
    traceFlags: hexByte(v, 53) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  if (state !== undefined && state.length > 0) sc.traceState = createTraceState(state);
  return sc;
}

const DASH = 0x2d;

/** True when `s[from, to)` is lowercase hex digits (W3C Trace Context allows no others). */
function isLowerHex(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** The byte of the two lowercase hex digits at `s[at]`. */
function hexByte(s: string, at: number): number {
  return (hexDigit(s.charCodeAt(at)) << 4) | hexDigit(s.charCodeAt(at + 1));
}

function hexDigit(c: number): number {
  return c <= 0x39 ? c - 0x30 : c - 0x61 + 10;
}

function serializeBaggage(entries: Array<[string, BaggageEntry]>): string {
  let out = '';
  let n = 0;
  for (const [key, entry] of entries) {
    if (n === MAX_BAGGAGE_ENTRIES) break;
    let item = `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`;
    const meta = entry.metadata?.toString();
    if (meta) item += `;${meta}`;
    const next = out === '' ? item : `${out},${item}`;
    if (next.length > MAX_BAGGAGE_LENGTH) break;
    out = next;
    n++;
  }
  return out;
}

function parseBaggage(value: string): Record<string, BaggageEntry> | undefined {
  if (value.length > MAX_BAGGAGE_LENGTH) return undefined;
  const entries: Record<string, BaggageEntry> = {};
  let n = 0;
  for (const item of value.split(',')) {
    if (n === MAX_BAGGAGE_ENTRIES) break;
    const semi = item.indexOf(';');
    const pair = semi < 0 ? item : item.slice(0, semi);
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    try {
      const key = decodeURIComponent(pair.slice(0, eq).trim());
      const entry: BaggageEntry = { value: decodeURIComponent(pair.slice(eq + 1).trim()) };
      if (semi >= 0) entry.metadata = baggageEntryMetadataFromString(item.slice(semi + 1));
      entries[key] = entry;
      n++;
    } catch {
      // A malformed percent-encoding drops that entry, not the message.
    }
  }
  return n === 0 ? undefined : entries;
}
