/** The etcd counters the membership-scale benchmark reads from etcd's /metrics. */
export interface EtcdCounters {
  leaseGrants: number;
  /** Key writes: puts and deleted keys (lease expiries included). */
  puts: number;
  deletes: number;
  /** Watch events etcd sent to watchers. */
  events: number;
  /** gRPC messages etcd received (unary requests and stream messages such as keep-alives). */
  grpcMessages: number;
  dbSize: number;
  dbSizeInUse: number;
  /** Applies etcd itself reports as slow (over 100 ms): etcd could not keep up. */
  slowApplies: number;
  /** Seconds spent in WAL fsyncs, and their count (disk latency seen by etcd). */
  walFsyncSeconds: number;
  walFsyncs: number;
}

/** Reads etcd's Prometheus endpoint and picks the counters out. */
export async function etcdCounters(endpoint: string): Promise<EtcdCounters> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const sum = (name: string): number => {
    let total = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{')) {
        total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return total;
  };
  return {
    leaseGrants: sum('etcd_debugging_lease_granted_total'),
    puts: sum('etcd_debugging_mvcc_put_total'),
    deletes: sum('etcd_debugging_mvcc_delete_total'),
    events: sum('etcd_debugging_mvcc_events_total'),
    grpcMessages: sum('grpc_server_msg_received_total'),
    dbSize: sum('etcd_mvcc_db_total_size_in_bytes'),
    dbSizeInUse: sum('etcd_mvcc_db_total_size_in_use_in_bytes'),
    slowApplies: sum('etcd_server_slow_apply_total'),
    walFsyncSeconds: sum('etcd_disk_wal_fsync_duration_seconds_sum'),
    walFsyncs: sum('etcd_disk_wal_fsync_duration_seconds_count'),
  };
}

/** b - a, field by field. */
export function delta(a: EtcdCounters, b: EtcdCounters): EtcdCounters {
  const out = { ...b };
  for (const k of Object.keys(a) as Array<keyof EtcdCounters>) out[k] = b[k] - a[k];
  return out;
}
