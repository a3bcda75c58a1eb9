import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Bounds a server's open connections to `max` by making room rather than refusing: when a
 * connection arrives with `max` open, the one that has waited longest without a request in
 * progress (connected and silent, trickling its request head, or idle between keep-alive
 * requests) is closed, and the newcomer kept. Only when every open connection is in the middle
 * of a request is the newcomer closed.
 *
 * Why not Node's `server.maxConnections`: it closes the newcomer, so 256 sockets that connect
 * and say nothing (each held up to headersTimeoutMs, then opened again) kept every liveness
 * probe out: /livez failed for as long as the flood went on and Kubernetes restarted a healthy
 * member. A probe sends its request the moment it connects; it is the newest connection, so a
 * flood of silent ones only ever closes each other.
 */
export class ConnectionSlots {
  private open = 0;
  /** Connections with no request in progress, longest waiting first (Set keeps insertion order). */
  private readonly waiting = new Set<Socket>();

  constructor(
    server: Server,
    private readonly max: number,
    /** Told each time a connection is closed for room: 'evicted' (an older one) or 'refused'. */
    private readonly onClosed: (how: 'evicted' | 'refused') => void,
  ) {
    server.on('connection', (socket: Socket) => this.connected(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      this.waiting.delete(socket);
      // Between keep-alive requests it waits again (re-inserted: it waits from now).
      res.once('finish', () => {
        if (!socket.destroyed) this.waiting.add(socket);
      });
    });
  }

  private connected(socket: Socket): void {
    this.open++;
    this.waiting.add(socket);
    socket.once('close', () => {
      this.open--;
      this.waiting.delete(socket);
    });
    if (this.open <= this.max) return;
    const oldest = this.waiting.values().next().value as Socket | undefined;
    if (oldest !== undefined && oldest !== socket) {
      this.waiting.delete(oldest);
      oldest.destroy();
      this.onClosed('evicted');
    } else {
      this.waiting.delete(socket);
      socket.destroy();
      this.onClosed('refused');
    }
  }
}
