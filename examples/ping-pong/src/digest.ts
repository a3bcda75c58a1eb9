import { isReminderFire, kind, type Cluster, type GrainContext } from '@granary/cluster';
import type { Logger } from '@granary/core';

/** The kind of the digest grains (one per ponger id). */
export const DIGEST_KIND = 'digest';
/** The digest's reminder: its name and period. */
export const DIGEST_REMINDER = 'every-4s';
export const DIGEST_PERIOD_MS = 4000;
/** A digest passivates this long after a fire: well before the next one wakes it again. */
export const DIGEST_IDLE_MS = 1000;

/**
 * A grain woken by a durable reminder: each fire activates it (it passivated after the last
 * one), it logs the fire and passivates again a second later. The reminder is stored in Redis
 * under the grain's shard, so it goes on firing when its node dies (on the shard's next owner)
 * and after the whole cluster restarts; each tick number is delivered at most once.
 */
export class Digest {
  private activation = '';

  constructor(private readonly log: Logger) {}

  onActivate(ctx: GrainContext): void {
    this.activation = ctx.activationId;
    this.log.info(
      { grain: `${ctx.kind}/${ctx.identity}`, activation: ctx.activationId },
      'digest activated',
    );
  }

  onDeactivate(reason: string): void {
    this.log.info({ activation: this.activation, reason }, 'digest passivated');
  }

  receive(ctx: GrainContext): unknown {
    const m = ctx.message;
    if (!isReminderFire(m)) return undefined;
    this.log.info(
      {
        grain: `${ctx.kind}/${ctx.identity}`,
        tick: m.tick,
        late: `${m.firedAt - m.dueAt}ms`,
        skipped: m.skipped,
        activation: this.activation,
      },
      'reminder fired',
    );
    return undefined;
  }
}

/** The digest kind, passivating DIGEST_IDLE_MS after each fire. */
export function digestKind(log: Logger) {
  return kind(DIGEST_KIND, () => new Digest(log), { idleTimeoutMs: DIGEST_IDLE_MS });
}

/**
 * Sets the digest reminder of `id` unless it exists: every DIGEST_PERIOD_MS, first in 2 s, and
 * after downtime one fire for the missed ticks (`catchUp: 'once'`). Idempotent across nodes and
 * restarts: an existing schedule (and its tick count) is kept.
 */
export async function scheduleDigest(cluster: Cluster, id: string): Promise<void> {
  const reminders = cluster.reminders(DIGEST_KIND, id);
  if ((await reminders.list()).some((r) => r.name === DIGEST_REMINDER)) return;
  await reminders.set(DIGEST_REMINDER, {
    dueInMs: 2000,
    periodMs: DIGEST_PERIOD_MS,
    catchUp: 'once',
  });
}
