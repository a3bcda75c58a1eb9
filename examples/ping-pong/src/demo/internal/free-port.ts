import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where the kernel hands out ports itself (Linux's ephemeral range; 32768 when unreadable).
 * A port it picks for `listen(0)` comes from there, and so does the local port of every
 * outgoing connection: a port found free there can be taken by a client socket before the
 * process it is meant for binds it. Below the range only an explicit bind can take it.
 */
function ephemeralStart(): number {
  try {
    const from = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(from) && from > LOWEST + 1000 ? from : 32_768;
  } catch {
    return 32_768;
  }
}

const LOWEST = 20_000;
const TRIES = 64;
/** Ports this process handed out already: two calls never return the same one. */
const given = new Set<number>();

/**
 * A TCP port on `host` that was free a moment ago, for a process started next that must
 * listen on a port known in advance (the seed node, the private Redis): a random one below
 * the ephemeral range, or one the OS picks when none of TRIES answers. Nodes whose port
 * nobody needs to know beforehand listen on port 0 instead, which cannot collide.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const upper = ephemeralStart();
  for (let i = 0; i < TRIES; i++) {
    const port = LOWEST + Math.floor(Math.random() * (upper - LOWEST));
    if (given.has(port)) continue;
    const bound = await listenOnce(port, host).catch(() => undefined);
    if (bound !== undefined) {
      given.add(bound);
      return bound;
    }
  }
  return listenOnce(0, host);
}

/** Binds `port` (0: any), closes it again, and gives the port that was bound. */
function listenOnce(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}
