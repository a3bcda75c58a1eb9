import { UnknownKindError } from '../errors';
import type { PID } from '../pid';
import { entryMessage, entryOf, entrySender } from '../entry';
import type { Entry, Process } from '../process';
import type { Props } from '../props';
import type { ProcessRegistry } from '../process-registry';
import { TYPE_NAME } from '../serialization/type-name';
import { WireTypes } from './internal/wire';

/** Well-known id of every node's activator: remote spawn requests go to `address/$remote-activator`. */
export const ACTIVATOR_ID = '$remote-activator';

const SPAWN_REQUEST = 'granary.remote.SpawnRequest';

/** What the activator needs to spawn: the system's root context. */
export interface Spawner {
  spawn(props: Props): PID;
  spawnNamed(props: Props, name: string): PID;
}

/**
 * Answers remote spawn requests (`granary.remote.SpawnRequest`) for the kinds registered on
 * this node with `remote.registerKind`. A plain process rather than an actor: a spawn is
 * synchronous, so there is nothing to queue.
 */
export class RemoteActivator implements Process {
  constructor(
    private readonly registry: ProcessRegistry,
    private readonly root: Spawner,
    private readonly kinds: ReadonlyMap<string, Props>,
  ) {}

  /** A spawn request (never refused: it is answered, with an error if need be). */
  post(_pid: PID, entry: Entry): boolean {
    this.spawnFor(entryMessage(entry), entrySender(entry));
    return true;
  }

  private spawnFor(message: unknown, sender: PID | undefined): void {
    const reply = (answer: unknown): void => {
      if (sender) this.registry.get(sender).post(sender, entryOf(answer), false);
    };
    const request = message as {
      kind?: unknown;
      name?: unknown;
      [TYPE_NAME]?: string;
    } | null;
    if (request?.[TYPE_NAME] !== SPAWN_REQUEST || typeof request.kind !== 'string') {
      return reply(new TypeError('the remote activator only takes granary.remote.SpawnRequest'));
    }
    const props = this.kinds.get(request.kind);
    if (!props) return reply(new UnknownKindError(request.kind));
    try {
      const name = typeof request.name === 'string' ? request.name : '';
      const pid = name ? this.root.spawnNamed(props, name) : this.root.spawn(props);
      reply(
        WireTypes.SpawnResponse.create({ pid: { address: this.registry.address, id: pid.id } }),
      );
    } catch (err) {
      reply(err);
    }
  }

  sendSystemMessage(): void {}

  stop(): void {}
}
