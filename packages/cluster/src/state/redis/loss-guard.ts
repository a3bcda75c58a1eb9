import type { ClusterLogger } from '../../internal/logger';
import { StateLostError, type StateLossEvidence } from '../errors';
import type { LossLedger } from './loss-ledger';
import type { ScriptClient } from './redis-commands';
import type { LossAdminStore } from './state-loss-admin';
import type { StateKeys } from './state-keys';
import type { StoreIdentity, StoreLoss } from './store-identity';

/** Script command names (defined on the client by RedisStateStore). */
export const MARK_LOST_COMMAND = 'granaryStateMarkLostV1';
export const RESOLVE_LOST_COMMAND = 'granaryStateResolveLostV1';
export const IDENTITY_COMMAND = 'granaryStateIdentityV1';
export const ACCEPT_STORE_LOSS_COMMAND = 'granaryStateAcceptStoreLossV1';

/** What a read found, as the guard judges it. */
export type ReadVerdict = 'serve' | 'read-again';

/**
 * Lost-data detection around RedisStateStore's reads and writes: judges what a read found
 * against the lost marks, the store identity and the versions remembered as acknowledged;
 * turns a lost reply of a write into StateLostError; applies the kind's policy (accepting
 * resolves the mark at once); and serves the operator API (state-loss-admin.ts).
 *
 * Every Redis command here runs through `run`, the store's bounded and error-mapped runner.
 */
export class LossGuard implements LossAdminStore {
  constructor(
    private readonly client: ScriptClient,
    private readonly run: <T>(kind: string, id: string, command: () => Promise<T>) => Promise<T>,
    private readonly ledger: LossLedger,
    private readonly identity: StoreIdentity,
    private readonly keys: StateKeys,
    private readonly logger: ClusterLogger,
  ) {}

  /**
   * Judges a read of `key`: `version` and `lost` as stored (null: absent). Throws StateLostError
   * for a grain refused by its policy; 'read-again' after the policy accepted (the version
   * moved) or a write raced in.
   */
  async judgeRead(
    kind: string,
    id: string,
    key: string,
    version: number | null,
    lost: number | null,
  ): Promise<ReadVerdict> {
    if (lost !== null) {
      return this.lostFound(new StateLostError(kind, id, lost, version, 'marked'), key);
    }
    const seen = this.ledger.seen(key);
    if (seen !== undefined && (version === null || version < seen)) {
      const reply = await this.run(kind, id, () => this.client[MARK_LOST_COMMAND]!(key, seen));
      if (reply[0] === 0) return 'read-again';
      const found = Number(reply[1]);
      const err = new StateLostError(
        kind,
        id,
        Number(reply[2]),
        found < 0 ? null : found,
        'version',
      );
      this.addToIndex(key);
      return this.lostFound(err, key);
    }
    if (version !== null) return 'serve';
    // Nothing stored: a new grain, unless the store lost everything it had.
    await this.run(kind, id, () => this.identity.check());
    if (this.identity.refuses(kind) && this.ledger.policyOf(kind) === 'refuse') {
      const err = new StateLostError(kind, id, null, null, 'store-identity');
      this.ledger.report(err, key, false);
      throw err;
    }
    return 'serve';
  }

  /** The error for a write or clear the script found lost (REPLY_LOST) or marked (REPLY_MARKED). */
  lostReply(
    kind: string,
    id: string,
    key: string,
    found: number,
    seen: number,
    evidence: StateLossEvidence,
  ): StateLostError {
    const err = new StateLostError(kind, id, seen, found < 0 ? null : found, evidence);
    if (evidence === 'version') this.addToIndex(key);
    const accepted = this.ledger.policyOf(kind) === 'accept';
    this.ledger.report(err, key, accepted);
    if (accepted) {
      this.resolve(key, false).catch((e: unknown) =>
        this.logger.warn(
          { err: e, kind, id },
          "accepting lost state (policy 'accept') failed; the next read tries again",
        ),
      );
    }
    return err;
  }

  private async lostFound(err: StateLostError, key: string): Promise<ReadVerdict> {
    const accepted = this.ledger.policyOf(err.kind) === 'accept';
    this.ledger.report(err, key, accepted);
    if (!accepted) throw err;
    await this.resolve(key, false);
    return 'read-again';
  }

  private addToIndex(key: string): void {
    this.client
      .sadd(this.keys.lostIndex, key)
      .catch((err: unknown) =>
        this.logger.warn(
          { err, key },
          'could not list a lost grain for stateLoss() (its mark stands)',
        ),
      );
  }

  // LossAdminStore: the operator API's access to the store.

  async markedKeys(): Promise<string[]> {
    return this.run('', '', () => this.client.smembers(this.keys.lostIndex));
  }

  async marks(keys: string[]): Promise<Array<[string | null, string | null]>> {
    return Promise.all(
      keys.map((key) =>
        this.run(
          '',
          '',
          () => this.client.hmget(key, 'v', 'l') as Promise<[string | null, string | null]>,
        ),
      ),
    );
  }

  parseKey(key: string): { kind: string; id: string } | undefined {
    return this.keys.parseKey(key);
  }

  keyOf(kind: string, id: string): string {
    return this.keys.keyOf(kind, id);
  }

  async resolve(key: string, force: boolean): Promise<boolean> {
    const floor = this.ledger.seen(key) ?? 0;
    const reply = await this.run('', '', () =>
      this.client[RESOLVE_LOST_COMMAND]!(key, floor, force ? '1' : '0'),
    );
    await this.run('', '', () => this.client.srem(this.keys.lostIndex, key));
    if (reply[0] !== 1) return false;
    this.ledger.remember(key, Number(reply[1]));
    this.ledger.cleared(key);
    return true;
  }

  async acceptStore(kind: string): Promise<boolean> {
    const reply = await this.run('', '', () =>
      this.client[ACCEPT_STORE_LOSS_COMMAND]!(this.keys.identity, kind, Date.now()),
    );
    await this.storeLoss();
    return Number(reply) === 1;
  }

  storeLoss(): Promise<StoreLoss | null> {
    return this.run('', '', () => this.identity.check());
  }
}
