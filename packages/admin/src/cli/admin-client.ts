import { CliExit, EXIT } from './exit-codes';

/**
 * Most bytes of one admin API answer the CLI reads. The largest real answer (`grains` of a
 * member with a million activations) is tens of MiB; a server answering without end (a wrong
 * `--url`, a hostile endpoint) must not grow the CLI's memory until it dies.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** Where the CLI finds the admin API and how it authenticates. */
export interface Target {
  url: string;
  token: string | undefined;
  timeoutMs: number;
}

/** Calls the admin API: JSON in and out, errors mapped to the CLI's exit codes. */
export async function adminFetch<T>(target: Target, path: string, body?: unknown): Promise<T> {
  if (target.token === undefined || target.token === '') {
    throw new CliExit(EXIT.unauthorized, 'no admin token: pass --token or set GRANARY_ADMIN_TOKEN');
  }
  const url = new URL(path, target.url.endsWith('/') ? target.url : target.url + '/');
  let res: Response;
  try {
    res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new CliExit(EXIT.unreachable, `cannot reach the admin API at ${url.origin} (${cause})`);
  }
  const text = await boundedText(res, url.origin);
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new CliExit(
      EXIT.failed,
      `the admin API answered ${res.status} with something that is not JSON`,
    );
  }
  if (res.status === 401)
    throw new CliExit(EXIT.unauthorized, 'the admin API refused the token (401)');
  const { error, code } = json as { error?: string; code?: string };
  if (res.status === 404) throw new CliExit(EXIT.notFound, error ?? 'not found', code);
  if (res.status === 400 || res.status === 413 || res.status === 415) {
    throw new CliExit(EXIT.usage, error ?? `bad request (${res.status})`, code);
  }
  if (!res.ok) {
    const e = json as { name?: string; originalName?: string };
    const what = [e.name, e.originalName].filter(Boolean).join(' / ');
    throw new CliExit(
      EXIT.failed,
      `${what ? what + ': ' : ''}${error ?? `HTTP ${res.status}`}`,
      code,
    );
  }
  return json as T;
}

/** The answer's body as text, refused past MAX_ANSWER_BYTES (by its length, or as it streams). */
async function boundedText(res: Response, origin: string): Promise<string> {
  const tooLarge = (): CliExit =>
    new CliExit(
      EXIT.failed,
      `the admin API at ${origin} answered more than ${MAX_ANSWER_BYTES} bytes: not read (is --url an admin API?)`,
    );
  if (Number(res.headers.get('content-length')) > MAX_ANSWER_BYTES) {
    void res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > MAX_ANSWER_BYTES) {
      void reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
