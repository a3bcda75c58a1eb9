import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed out below the kernel's ephemeral range: a port the OS picks (port 0) comes from
 * that range, and so does the local port of every outgoing connection, so between our check
 * and the server's bind a client socket anywhere on the machine could take it (seen in CI:
 * etcd failed with "bind: address already in use"). Below the range only an explicit bind can.
 */
const LOW_PORTS = { from: 20_000, tries: 64 };

/** Where the kernel's ephemeral range starts (Linux), 32768 when it cannot be read. */
function ephemeralStart(): number {
  try {
    const [from] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    const n = Number(from);
    return Number.isInteger(n) && n > LOW_PORTS.from + 1000 ? n : 32_768;
  } catch {
    return 32_768;
  }
}

const upper = ephemeralStart();
/** Ports tried in this process (two calls never return the same one). */
const given = new Set<number>();

/**
 * A TCP port on `host` that was free a moment ago: a random one below the ephemeral range if
 * one of LOW_PORTS.tries answers, else one the OS picks. Callers that bind later still retry on
 * EADDRINUSE where they can.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let i = 0; i < LOW_PORTS.tries; i++) {
    const port = LOW_PORTS.from + Math.floor(Math.random() * (upper - LOW_PORTS.from));
    if (given.has(port)) continue;
    if (await canListen(port, host)) {
      given.add(port);
      return port;
    }
  }
  return listenOn(0, host);
}

function canListen(port: number, host: string): Promise<boolean> {
  return listenOn(port, host).then(
    () => true,
    () => false,
  );
}

/** Listens on `port` (0: any), closes, and gives the port that was bound. */
function listenOn(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port of a listening socket'));
      });
    });
  });
}
