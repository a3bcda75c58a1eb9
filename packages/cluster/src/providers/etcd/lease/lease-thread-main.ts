// Entry of the lease thread (a worker_threads Worker, one per process): keeps the leases of every
// EtcdProvider of the process alive, off the main event loop. See lease-thread.ts.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { KeepAliveConnection, type ConnectionHost } from './keep-alive-connection';
import type {
  FromLeaseThread,
  KeepRequest,
  LeaseThreadData,
  ToLeaseThread,
} from './lease-protocol';

const data = workerData as LeaseThreadData;
const shared = new Float64Array(data.shared);
// The main thread's performance.now() at the hrtime instant data.hrNow; both clocks are the
// same monotonic clock, so one offset maps this thread's performance.now() onto the main one.
const offset =
  data.mainNow + Number(process.hrtime.bigint() - data.hrNow) / 1e6 - performance.now();

const post = (msg: FromLeaseThread): void => parentPort?.postMessage(msg);

const host: ConnectionHost = {
  mainNow: () => performance.now() + offset,
  shared,
  lost: (request, cause) => post({ type: 'lost', slot: request.slot, lease: request.lease, cause }),
  log: (level, msg, fields) => post({ type: 'log', level, msg, fields }),
};

/** Connections by endpoint set and credentials: leases to the same etcd share one stream. */
const connections = new Map<string, KeepAliveConnection>();
/** Which connection keeps each slot. */
const bySlot = new Map<number, string>();

function connectionKey(r: KeepRequest): string {
  return (
    JSON.stringify([r.endpoints, r.auth?.username, r.auth?.password, r.grpcOptions ?? {}]) +
    (r.credentials ? `:${r.credentials.rootCertificate.toString('base64')}` : '')
  );
}

parentPort?.on('message', (msg: ToLeaseThread) => {
  if (msg.type === 'keep') {
    const key = connectionKey(msg);
    let conn = connections.get(key);
    if (!conn) connections.set(key, (conn = new KeepAliveConnection(msg, host)));
    bySlot.set(msg.slot, key);
    conn.add(msg);
  } else {
    const key = bySlot.get(msg.slot);
    bySlot.delete(msg.slot);
    const conn = key === undefined ? undefined : connections.get(key);
    if (!conn || key === undefined) return;
    conn.remove(msg.slot);
    if (conn.size === 0) {
      conn.close();
      connections.delete(key);
    }
  }
});
