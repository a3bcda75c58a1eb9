import type { IncomingMessage, ServerResponse } from 'node:http';
import { AdminError } from './errors';

/** Largest request body the admin API reads (its bodies are a few names). */
const MAX_BODY_BYTES = 16 * 1024;

/** Headers on every admin answer: no caching, no sniffing, no cross-origin use. */
const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/** An error the API answers with its HTTP status and message (and `apiCode` as `code`). */
export class HttpError extends AdminError {
  static override readonly code = 'ERR_ADMIN_HTTP';
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    message: string,
    /** What a script branches on where one status has several causes (docs/admin-api.md). */
    readonly apiCode?: string,
  ) {
    super(message);
  }

  /** The answer's body. */
  body(): { error: string; code?: string } {
    return this.apiCode === undefined
      ? { error: this.message }
      : { error: this.message, code: this.apiCode };
  }
}

/** `code` of the answers that say why a 404 or 503 came (docs/admin-api.md, "Errors"). */
export const API_CODES = {
  /** 503: the admin API was closed (`admin.close()`, or its member was drained). */
  closed: 'ERR_ADMIN_CLOSED',
  /** 404: no member of the topology hosts the kind. */
  unknownKind: 'ERR_ADMIN_UNKNOWN_KIND',
  /** 404: the grain has no reminder of that name. */
  noSuchReminder: 'ERR_ADMIN_NO_SUCH_REMINDER',
  /** 409: the member answering runs without `reminders: { store }`. */
  remindersNotConfigured: 'ERR_REMINDERS_NOT_CONFIGURED',
} as const;

/**
 * Sends `body` as JSON with `status`. A 413 closes the connection: the rest of that body is
 * not wanted, and Node would otherwise read it all to keep the connection for the next request.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    ...(status === 413 ? { connection: 'close' } : undefined),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Sends a static asset. */
export function sendAsset(res: ServerResponse, type: string, body: Buffer | string): void {
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'content-security-policy':
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
  });
  res.end(body);
}

/** Starts a server-sent event stream. */
export function startEvents(res: ServerResponse): void {
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    connection: 'keep-alive',
  });
  res.flushHeaders();
}

/** The query parameters of a request. */
export function queryOf(req: IncomingMessage): URLSearchParams {
  return new URL(req.url ?? '/', 'http://admin.invalid').searchParams;
}

/** Reads a JSON object body (POST): 415 unless JSON, 413 past `maxBytes`, 400 if malformed. */
export async function readJson(
  req: IncomingMessage,
  maxBytes = MAX_BODY_BYTES,
): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new HttpError(415, 'content-type must be application/json');
  }
  // A declared length over the limit is refused before anything is read: waiting for it held
  // the request (and its connection) open until the server's request timeout.
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw new HttpError(413, `body larger than ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `body larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** A required string parameter (query or body), 1..1024 characters. */
export function requireName(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1024) {
    throw new HttpError(400, `${name} is required (a string of 1..1024 characters)`);
  }
  return value;
}

/** An integer parameter in [min, max] (`dflt` when absent); 400 naming it otherwise. */
export function intParam(
  v: string | null,
  dflt: number,
  min: number,
  max: number,
  name: string,
): number {
  if (v === null) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new HttpError(400, `${name} must be an integer in [${min}, ${max}]`);
  }
  return n;
}
