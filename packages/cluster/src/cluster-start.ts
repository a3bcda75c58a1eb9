import { InvalidOptionError, type ActorSystem } from '@granary/core';
import { DEFAULT_CLUSTER_OPTIONS, type ClusterOptions } from './cluster-options';
import { DEFAULT_GRAINS_OPTIONS, type GrainsOptions } from './grains/grains-options';
import { rejectUnknownStartOptions } from './cluster-start-options';
import type { ClusterLogger } from './internal/logger';
import { ReminderStoreUnavailableError } from './reminders/errors';
import { StateUnavailableError } from './state/errors';
import type { OpsServer } from './ops/ops-server';
import type { ResolvedOverloadOptions } from './overload/overload-options';

/**
 * Longest wait of Cluster.start for the member's first claims to be answered: long enough for a
 * loaded etcd, short enough that a member whose store stalls still starts (and claims later).
 */
export const START_CLAIMS_WAIT_MS = 5_000;

/**
 * How long Cluster.start keeps opening a store it cannot reach (a Redis restarting as the member
 * starts, both started together): as long as a join waits for etcd by default (joinTimeoutMs).
 */
export const STORE_OPEN_WAIT_MS = 10_000;
/** Pause between those attempts (each is itself bounded by the store's commandTimeoutMs). */
const STORE_OPEN_RETRY_MS = 250;

/** What Cluster.start takes: the cluster's options and the grains'. */
export type StartOptions = ClusterOptions & GrainsOptions;

/** Cluster.start's options with their defaults, checked. */
export type ResolvedStartOptions = StartOptions &
  typeof DEFAULT_CLUSTER_OPTIONS & { requestTimeoutMs: number };

/** What Cluster.start settled before building the member. */
export interface ClusterInit {
  readonly id: string;
  readonly address: string;
  readonly system: ActorSystem;
  /** The cluster made the system (and its remote): it shuts them down with itself. */
  readonly ownsSystem: boolean;
  readonly options: ResolvedStartOptions;
  readonly overload: ResolvedOverloadOptions;
  /** The member's logger, bound with `{ node }` (parts bind their `component`). */
  readonly logger: ClusterLogger;
  /** The ops server, started before the join (undefined without `ops`). */
  readonly ops: OpsServer | undefined;
}

/**
 * Cluster.start's options merged over their defaults and checked.
 * @throws InvalidOptionError naming the first option out of range.
 */
export function resolveStartOptions(options: StartOptions): ResolvedStartOptions {
  rejectUnknownStartOptions(options);
  // An option given as undefined takes its default, as if it were left out.
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const merged = {
    ...DEFAULT_CLUSTER_OPTIONS,
    ...(given as StartOptions),
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_GRAINS_OPTIONS.requestTimeoutMs,
  };
  if (typeof merged.name !== 'string' || merged.name.length === 0 || merged.name.includes('/')) {
    throw new InvalidOptionError('name', "must be a non-empty string without '/'");
  }
  if (!merged.provider) throw new InvalidOptionError('provider', 'is required');
  if (!(Number.isFinite(merged.claimRetryMs) && merged.claimRetryMs > 0)) {
    throw new InvalidOptionError('claimRetryMs', `must be > 0, got ${merged.claimRetryMs}`);
  }
  if (!(merged.requestTimeoutMs > 0)) {
    throw new InvalidOptionError('requestTimeoutMs', `must be > 0, got ${merged.requestTimeoutMs}`);
  }
  return merged;
}

/**
 * Opens the state and reminder stores (each told the member's logger): a store that cannot keep
 * what it promises (durability) stops the member before it joins.
 */
export async function openStores(
  merged: ResolvedStartOptions,
  logger: ClusterLogger,
): Promise<void> {
  const stateLogger = logger.child({ component: 'state' });
  const reminderStore = merged.reminders?.store;
  reminderStore?.useLogger?.(logger.child({ component: 'reminders' }));
  await Promise.all([
    ...(merged.stateStores ?? []).map((store) => {
      store.useLogger?.(stateLogger);
      return store.open && openWithin(() => store.open!(), 'state store', stateLogger);
    }),
    reminderStore?.open &&
      openWithin(
        () => reminderStore.open!(),
        'reminder store',
        logger.child({ component: 'reminders' }),
      ),
  ]);
}

/**
 * Opens a store, again while it is only unreachable, for at most STORE_OPEN_WAIT_MS: without it a
 * Redis down for a second as the member starts failed the start within commandTimeoutMs. What
 * the store refuses for good (its durability level) fails at once.
 */
async function openWithin(
  open: () => Promise<void>,
  what: string,
  logger: ClusterLogger,
): Promise<void> {
  const until = Date.now() + STORE_OPEN_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (err) {
      const unreachable = StateUnavailableError.is(err) || ReminderStoreUnavailableError.is(err);
      if (!unreachable || Date.now() + STORE_OPEN_RETRY_MS >= until) throw err;
      if (attempt === 1) {
        logger.warn(
          { err, waitMs: STORE_OPEN_WAIT_MS },
          `${what} unreachable at start; trying again for up to ${STORE_OPEN_WAIT_MS} ms`,
        );
      }
      await new Promise((r) => setTimeout(r, STORE_OPEN_RETRY_MS));
    }
  }
}

/**
 * The address this member states: `address` if given, else its system's (unless the system
 * does not listen), else the remote's advertised `host:port`, else `nonhost`.
 */
export function memberAddress(merged: ResolvedStartOptions, system: ActorSystem): string {
  const remote = merged.remote;
  return (
    merged.address ??
    (system.address === 'nonhost' ? undefined : system.address) ??
    (remote ? `${remote.advertisedHost ?? remote.host}:${remote.port}` : 'nonhost')
  );
}
