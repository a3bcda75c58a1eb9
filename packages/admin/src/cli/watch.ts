import type { Sample } from '../sampler';
import type { Target } from './admin-client';
import { CliExit, EXIT } from './exit-codes';

/** Most bytes of one event the tail holds (a sample is a few KiB; a stream without ends is not). */
const MAX_EVENT_BYTES = 1024 * 1024;

/**
 * `granary watch`: a live tail of the cluster, one line per second (activations and
 * deactivations per second, calls per second, latency, errors), from the admin API's event
 * stream. Stops after `count` samples, or on Ctrl-C.
 */
export async function watch(
  t: Target,
  count: number,
  asJson: boolean,
  print: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  if (!t.token)
    throw new CliExit(EXIT.unauthorized, 'no admin token: pass --token or set GRANARY_ADMIN_TOKEN');
  const url = new URL('v1/events', t.url.endsWith('/') ? t.url : t.url + '/');
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${t.token}` },
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (signal?.aborted) return;
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new CliExit(EXIT.unreachable, `cannot reach the admin API at ${url.origin} (${cause})`);
  }
  if (res.status === 401)
    throw new CliExit(EXIT.unauthorized, 'the admin API refused the token (401)');
  if (!res.ok || res.body === null)
    throw new CliExit(EXIT.failed, `the event stream answered ${res.status}`);
  if (!asJson)
    print('TIME      MEMBERS  ACTIVATIONS  ACT/S  DEACT/S  CALLS/S  P50 MS  P99 MS  ERR/S  DEAD/S');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let seen = 0;
  let skipHistory = true;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new CliExit(EXIT.unreachable, 'the event stream ended (the member left?)');
      buffer += decoder.decode(value, { stream: true });
      if (buffer.length > MAX_EVENT_BYTES && buffer.indexOf('\n\n') < 0) {
        throw new CliExit(
          EXIT.failed,
          `the event stream sent ${buffer.length} bytes without an event's end: not an admin API event stream`,
        );
      }
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event.split('\n').find((l) => l.startsWith('data: '));
        if (data === undefined) continue;
        const s = JSON.parse(data.slice(6)) as Sample;
        // The stream starts with its history: a tail starts from now.
        if (skipHistory && Date.now() - s.t > 1500) continue;
        skipHistory = false;
        print(asJson ? JSON.stringify(s) : line(s));
        if (++seen >= count) return;
      }
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}

function line(s: Sample): string {
  const total = Object.values(s.activations).reduce((a, b) => a + b, 0);
  const time = new Date(s.t).toISOString().slice(11, 19);
  const ms = (x: number | null) => (x === null ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(0));
  const missing = s.notAnswering.length
    ? `  not answering: ${s.notAnswering.map((n) => n.id).join(',')}`
    : '';
  return (
    [
      time.padEnd(8),
      String(s.members.length).padStart(7),
      String(total).padStart(12),
      s.activatedRate.toFixed(0).padStart(6),
      s.deactivatedRate.toFixed(0).padStart(8),
      s.calls.rate.toFixed(0).padStart(8),
      ms(s.calls.p50).padStart(7),
      ms(s.calls.p99).padStart(7),
      s.calls.failedRate.toFixed(0).padStart(6),
      s.deadLettersRate.toFixed(0).padStart(7),
    ].join(' ') + missing
  );
}
