import { readdirSync } from 'node:fs';
import * as net from 'node:net';

/**
 * What reaches a gRPC port that is not a gRPC client (a browser, a scanner, a misconfigured
 * proxy): a node or a gateway must close each at once, count it, and hold nothing after.
 */
export const NON_GRPC_PAYLOADS: ReadonlyArray<readonly [string, Buffer]> = [
  ['an HTTP/1.1 GET', Buffer.from('GET / HTTP/1.1\r\nHost: node\r\n\r\n')],
  [
    'an HTTP/1.1 POST promising 100 MB',
    Buffer.from('POST /x HTTP/1.1\r\nHost: node\r\nContent-Length: 100000000\r\n\r\nabc'),
  ],
  // A TLS ClientHello's record header and start, sent to a plaintext port.
  ['a TLS hello', Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00])],
  ['a line of garbage', Buffer.from('hello there\r\n')],
];

/**
 * Sends `payload` on a new connection to 127.0.0.1:`port`; resolves with the ms until the
 * server closed it, rejects if it is still open after `timeoutMs`.
 */
export function closedAfter(port: number, payload: Buffer, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    const at = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
    socket.on('error', () => undefined);
    socket.resume(); // read what the server answers (an HTTP/2 GOAWAY), so 'close' comes
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - at);
    });
  });
}

/** This process's open file descriptors (Linux: /proc/self/fd). */
export function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}
