import { connect, createServer, type Server, type Socket } from 'node:net';

/** Options of startTcpProxy(). */
export interface TcpProxyOptions {
  /** `host:port` (or `http://host:port`) the proxy forwards to. */
  target: string;
  /**
   * Host the proxy listens on.
   * @default '127.0.0.1'
   */
  host?: string;
}

/** A TCP proxy in front of one server, for fault tests (partitions, cut connections). */
export interface TcpProxyHandle {
  /** The port the proxy listens on. */
  readonly port: number;
  /** `http://host:port` of the proxy: hand it to a client instead of the target. */
  readonly url: string;
  /** Connections open through the proxy now. */
  readonly connections: number;
  /**
   * Partition: stop moving bytes both ways and hold them (connections stay open, new ones are
   * accepted but forward nothing), as a network that drops packets which TCP later retransmits.
   */
  partition(): void;
  /** Ends a partition: held bytes flow again, in order. */
  heal(): void;
  /** True while partitioned. */
  readonly partitioned: boolean;
  /**
   * Delays every byte from the server to the client by `ms` from now on (0: no delay), in order:
   * a server that answers late, e.g. one starved of CPU, while requests reach it on time.
   */
  delayReplies(ms: number): void;
  /** Resets every open connection (both sides see the connection close). */
  cut(): void;
  /** Closes the proxy and every connection. */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket;
  /** Chunks read while partitioned, per direction, flushed in order on heal. */
  toServer: Buffer[];
  toClient: Buffer[];
}

/**
 * Starts a TCP proxy on a free loopback port in front of `target`. `partition()` makes the path
 * silent without closing anything (what a network partition looks like to both ends);
 * `heal()` lets the held bytes through; `cut()` resets every connection.
 *
 * @example
 * const proxy = await startTcpProxy({ target: etcd.endpoints[0] });
 * const client = new Etcd3({ hosts: [proxy.url] });
 * proxy.partition(); // ... the client sees nothing, etcd sees nothing
 * proxy.heal();
 */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxyHandle> {
  const { hostname: targetHost, port: targetPort } = parseTarget(options.target);
  const host = options.host ?? '127.0.0.1';
  const pairs = new Set<Pair>();
  let partitioned = false;
  let replyDelayMs = 0;

  const forward = (from: Socket, to: Socket, held: Buffer[], replies: boolean): void => {
    // Delayed chunks wait here, due times in order, behind one timer (so they stay in order).
    const late: Array<{ due: number; chunk: Buffer }> = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = (): void => {
      timer = undefined;
      while (late.length > 0 && late[0]!.due <= Date.now()) {
        const { chunk } = late.shift()!;
        if (!to.destroyed) to.write(chunk);
      }
      if (late.length > 0) timer = setTimeout(pump, late[0]!.due - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      if (partitioned || held.length > 0) held.push(chunk);
      else if ((replies && replyDelayMs > 0) || late.length > 0) {
        const due = Math.max(Date.now() + (replies ? replyDelayMs : 0), late.at(-1)?.due ?? 0);
        late.push({ due, chunk });
        timer ??= setTimeout(pump, Math.max(0, late[0]!.due - Date.now()));
      } else to.write(chunk);
    });
  };
  const server: Server = createServer((client) => {
    const upstream = connect({ host: targetHost, port: targetPort });
    const pair: Pair = { client, server: upstream, toServer: [], toClient: [] };
    pairs.add(pair);
    forward(client, upstream, pair.toServer, false);
    forward(upstream, client, pair.toClient, true);
    const close = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // A close passes at once, even while partitioned: the tests partition live connections.
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : 0;

  const flush = (held: Buffer[], to: Socket): void => {
    for (const chunk of held.splice(0)) to.write(chunk);
  };
  return {
    port,
    url: `http://${host}:${port}`,
    get connections() {
      return pairs.size;
    },
    get partitioned() {
      return partitioned;
    },
    partition: () => {
      partitioned = true;
    },
    delayReplies: (ms: number) => {
      replyDelayMs = ms;
    },
    heal: () => {
      partitioned = false;
      for (const p of pairs) {
        flush(p.toServer, p.server);
        flush(p.toClient, p.client);
      }
    },
    cut: () => {
      for (const p of [...pairs]) {
        pairs.delete(p);
        p.client.resetAndDestroy();
        p.server.resetAndDestroy();
      }
    },
    close: async () => {
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parseTarget(target: string): { hostname: string; port: number } {
  const url = new URL(/^[a-z]+:\/\//.test(target) ? target : `tcp://${target}`);
  return { hostname: url.hostname, port: Number(url.port) };
}
