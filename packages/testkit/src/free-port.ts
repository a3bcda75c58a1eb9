import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. The OS picks it (port 0), so two calls in
 * one process rarely collide; callers that bind later still retry on EADDRINUSE.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port of a listening socket'));
      });
    });
  });
}
