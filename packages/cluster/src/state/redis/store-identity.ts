import { randomBytes } from 'node:crypto';

/** A loss of the whole store, as the identity marker records it. */
export interface StoreLoss {
  /** When it was detected (epoch ms). */
  detectedAt: number;
  /** The identity the store had before. */
  previousId: string;
  /** Kinds an operator let carry on (acceptStateLoss({ kind })). */
  acceptedKinds: string[];
}

/** Runs IDENTITY_SCRIPT: `(key, known id, fresh id, now)` → its reply. */
export type RunIdentityScript = (
  known: string,
  fresh: string,
  now: number,
) => Promise<(string | number)[]>;

/**
 * The store's identity marker: a random id written at first use (`<keyPrefix>store`) that this
 * store instance then expects to find. Redis can only lose it with everything else (a restart
 * without persistence, a flush, a failover to an empty replica), so finding it gone or changed
 * means the store lost data: every grain without state may be one that had some. The loss is
 * recorded in the marker itself, so every member (and every member started later) refuses
 * those grains until an operator accepts the loss.
 *
 * Checked when the store opens, after every reconnection, and before a read that finds no
 * state is believed.
 */
export class StoreIdentity {
  private known = '';
  private loss: StoreLoss | null = null;

  constructor(
    private readonly runScript: RunIdentityScript,
    /** Called once per loss this instance learns of (it logs and counts). */
    private readonly onLoss: (loss: StoreLoss, status: string) => void,
  ) {}

  /** The identity this instance knows ('' before the first check). */
  get id(): string {
    return this.known;
  }

  /** The unaccepted loss last seen, if any. */
  get lost(): StoreLoss | null {
    return this.loss;
  }

  /** True when grains of `kind` without state must be refused (a loss not accepted for it). */
  refuses(kind: string): boolean {
    return this.loss !== null && !this.loss.acceptedKinds.includes(kind);
  }

  /** Creates or checks the marker; records a loss if the marker is gone or changed. */
  async check(): Promise<StoreLoss | null> {
    const reply = await this.runScript(this.known, randomBytes(12).toString('hex'), Date.now());
    const [status, id, lostAt, previousId, ...accepted] = reply.map(String);
    const before = this.loss;
    this.known = id!;
    this.loss =
      lostAt === '' || lostAt === undefined
        ? null
        : { detectedAt: Number(lostAt), previousId: previousId!, acceptedKinds: accepted };
    if (this.loss && (before === null || before.detectedAt !== this.loss.detectedAt)) {
      this.onLoss(this.loss, status!);
    }
    return this.loss;
  }
}
