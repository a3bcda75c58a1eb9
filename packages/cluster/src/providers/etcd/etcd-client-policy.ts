import { ClusterError } from '../../errors';

/**
 * How long a host whose call failed in transport (unavailable, deadline) is skipped. Short: an
 * etcd member that was restarted is used again a second later; long enough that while one member
 * is dead or hung, the calls of that second go to the others instead of failing on it.
 */
const HOST_COOLDOWN_MS = 1000;

/** The shape of the etcd3 client's fault-handling policies (cockatiel's IPolicy, reduced). */
export interface EtcdCallPolicy {
  execute<T>(fn: () => T | Promise<T>): Promise<T>;
}

/**
 * A policy that runs the call once: fencing and retries are ours, and etcd3's default retry
 * would repeat a write whose outcome is unknown. Async so a sync throw becomes a rejection.
 */
export const PASS_THROUGH_POLICY: EtcdCallPolicy = {
  execute: async <T>(fn: () => T | Promise<T>): Promise<T> => fn(),
};

/**
 * Thrown instead of calling a host that is cooling down; the etcd3 client then tries another (it
 * passes an error of its own class through as it is, so only the last host's reaches a caller).
 */
export class EtcdHostCoolingDownError extends ClusterError {
  static override readonly code = 'ERR_ETCD_HOST_COOLING_DOWN';
  override readonly name = 'EtcdHostCoolingDownError';
}

/**
 * Per-host policy of the etcd3 client (one instance per endpoint): after a transport failure the
 * host is skipped for HOST_COOLDOWN_MS, so the client leaves a dead or hung etcd member at once
 * instead of picking it for a third of its calls. (The client tries the next host when a policy
 * refuses without calling through; etcd3's default circuit breaker needs three failures and then
 * refuses for 5 s.) Stream failures reach the policy too (the client reports them through it).
 */
export function hostCooldownPolicy(now: () => number = Date.now): EtcdCallPolicy {
  let coolingUntil = 0;
  return {
    async execute<T>(fn: () => T | Promise<T>): Promise<T> {
      if (now() < coolingUntil) {
        throw new EtcdHostCoolingDownError('etcd host skipped after a transport failure');
      }
      try {
        return await fn();
      } catch (err) {
        const name = (err as Error)?.name;
        if (name === 'GRPCUnavailableError' || name === 'GRPCDeadlineExceededError') {
          coolingUntil = now() + HOST_COOLDOWN_MS;
        }
        throw err;
      }
    },
  };
}
