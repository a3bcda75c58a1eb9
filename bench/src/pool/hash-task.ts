// The pool-cluster benchmark's job as a worker-thread handler (threaded pools): the same ~1 ms of
// pbkdf2 as pool-node's Hasher, with the iterations the member calibrated (in its environment,
// which worker threads copy at start).
import { pbkdf2Sync } from 'node:crypto';

const iterations = Number(process.env.POOL_BENCH_ITERATIONS);

export function handler(message: unknown): string {
  return pbkdf2Sync(String(message), 'granary', iterations, 32, 'sha256').toString('hex');
}
