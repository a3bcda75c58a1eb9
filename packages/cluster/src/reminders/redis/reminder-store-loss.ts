import type { Cluster, Redis } from 'ioredis';
import type { ClusterLogger } from '../../internal/logger';
import { ACCEPT_STORE_LOSS_SCRIPT, IDENTITY_SCRIPT } from '../../state/redis/scripts';
import { StoreIdentity, type StoreLoss } from '../../state/redis/store-identity';

/** Versioned script names (a client shared with a state store carries its own names). */
const IDENTITY_COMMAND = 'granaryRemIdentityV1';
const ACCEPT_COMMAND = 'granaryRemAcceptStoreLossV1';

type ScriptFn = (...args: (string | number)[]) => Promise<(string | number)[]>;

/**
 * Whether the reminder store's Redis lost its data, told by the state store's identity marker
 * (state/redis/store-identity.ts) at `<keyPrefix>store`: written at first use, checked when the
 * store opens and after every reconnection. A Redis that comes back empty (no persistence, a
 * container without its volume, a flush, a failover to an empty replica) forgets every reminder
 * and job, and which ticks were claimed: owners find their reminders gone at the next claim and
 * drop them, so without this check reminders stopped firing with nothing logged. The loss is
 * recorded in the marker, so a member started later learns of it too; it stands until an
 * operator calls `accept()` (the reminders themselves cannot be recovered: set them again).
 */
export class ReminderStoreLoss {
  private readonly identity: StoreIdentity;
  private readonly key: string;
  private readonly client: Record<string, ScriptFn>;
  private lostCount = 0;

  constructor(
    client: Redis | Cluster,
    keyPrefix: string,
    /** Runs a command once the client is ready, bounded and error-mapped (the store's). */
    private readonly exec: <T>(command: () => Promise<T>) => Promise<T>,
    logger: () => ClusterLogger,
  ) {
    client.defineCommand(IDENTITY_COMMAND, { numberOfKeys: 1, lua: IDENTITY_SCRIPT });
    client.defineCommand(ACCEPT_COMMAND, { numberOfKeys: 1, lua: ACCEPT_STORE_LOSS_SCRIPT });
    this.client = client as unknown as Record<string, ScriptFn>;
    this.key = `${keyPrefix}store`;
    this.identity = new StoreIdentity(
      (known, fresh, now) => this.client[IDENTITY_COMMAND]!(this.key, known, fresh, now),
      (loss, status) => {
        this.lostCount++;
        logger().error(
          { keyPrefix, status, detectedAt: loss.detectedAt, previousId: loss.previousId },
          'reminder store lost its data (identity marker gone or changed): every reminder and job stored before is gone and will not fire, and a reminder set again counts its ticks from 0; set them again, then call store.loss.accept()',
        );
      },
    );
  }

  /** Whole-store losses this instance learned of (each logged once at error level). */
  get lostStores(): number {
    return this.lostCount;
  }

  /** Creates or checks the marker (at open and after a reconnection). */
  async check(): Promise<StoreLoss | null> {
    return this.identity.check();
  }

  /** The loss not accepted yet, read afresh from the marker, or null. */
  current(): Promise<StoreLoss | null> {
    return this.exec(() => this.identity.check());
  }

  /** Accepts the recorded loss (every member stops reporting it); resolves with whether one stood. */
  async accept(): Promise<boolean> {
    const reply = await this.exec(() => this.client[ACCEPT_COMMAND]!(this.key, '', Date.now()));
    await this.current();
    return Number(reply) === 1;
  }
}
