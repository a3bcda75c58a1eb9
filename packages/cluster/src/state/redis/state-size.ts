import { StateTooLargeError } from '../errors';
import type { ScriptClient } from './redis-commands';
import { READ_SCRIPT } from './scripts';

/** The read script's command (versioned like the write scripts'). */
const READ_COMMAND = 'granaryStateReadV1';

/**
 * The store's bound on one grain's state (`maxStateBytes`): writes over it are refused before
 * they are sent, and reads go through READ_SCRIPT, which answers a stored state over it with
 * its length only. Before, a read took whatever was under the key whole: a 500 MB value put
 * there by anyone with Redis access was held in the member's memory at the grain's activation.
 */
export class StateSizeCap {
  private readonly send: (key: string, max: string) => Promise<number | (Buffer | null)[]>;
  private readonly maxArg: string;

  constructor(
    client: ScriptClient,
    readonly maxStateBytes: number,
  ) {
    client.defineCommand(READ_COMMAND, { numberOfKeys: 1, lua: READ_SCRIPT });
    const command = `${READ_COMMAND}Buffer`; // the fields as Buffers
    this.send = (key, max) =>
      client[command]!(key, max) as unknown as Promise<number | (Buffer | null)[]>;
    this.maxArg = String(maxStateBytes);
  }

  /** The fields s, v, l, e of the grain's hash. @throws StateTooLargeError */
  async read(kind: string, id: string, key: string): Promise<(Buffer | null)[]> {
    const reply = await this.send(key, this.maxArg);
    if (typeof reply === 'number') {
      throw new StateTooLargeError(kind, id, 'read', reply, this.maxStateBytes, key);
    }
    return reply;
  }

  /** @throws StateTooLargeError when `bytes` is over maxStateBytes. */
  checkWrite(kind: string, id: string, key: string, bytes: Uint8Array): void {
    if (bytes.byteLength > this.maxStateBytes) {
      throw new StateTooLargeError(kind, id, 'write', bytes.byteLength, this.maxStateBytes, key);
    }
  }
}
