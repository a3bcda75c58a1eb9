import { expect } from 'chai';
import type { GranaryClient, Topology } from '@granary/cluster';
import { PoolClient } from '../src/cluster/pool-client';
import { INVENTORY_ID, memberKind, type Inventory } from '../src/cluster/internal/pool-protocol';

/*
 * A caller whose members and answers the test sets: the race below needs a placement held at
 * a chosen step (its activations) while the topology moves, which real members do not give on
 * demand. Only the PoolClient's own logic runs here; the cluster fixtures test the rest.
 */
class Members {
  version = 1;
  members = ['m1', 'm2'];
  workers = new Map<string, number[]>([
    ['m1', [0, 1, 2]],
    ['m2', [3, 4, 5]],
  ]);
  dead = new Set<string>();
  /** Activations (pings) on these members wait until `release` settles them. */
  holdPingsOn = new Set<string>();
  private held: Array<() => void> = [];

  get topology(): Topology {
    return {
      version: this.version,
      members: this.members.map((id) => ({
        id,
        address: `${id}:1`,
        status: 'up',
        kinds: [memberKind('p', id)],
      })),
    } as unknown as Topology;
  }

  readonly system = undefined;

  request<T>(kind: string, id: string, message: unknown): Promise<T> {
    const host = kind.slice('p@'.length);
    if (this.dead.has(host)) return Promise.reject(new Error(`no live member hosts ${kind}`));
    const control = (message as { $granaryPool?: string }).$granaryPool;
    if (id === INVENTORY_ID && control === 'inventory') {
      const inv: Inventory = {
        size: 6,
        sizeAt: 0,
        maxPerNode: Infinity,
        maxInFlight: 100,
        workers: this.workers.get(host) ?? [],
      };
      return Promise.resolve(inv as T);
    }
    if (control === 'ping' && this.holdPingsOn.has(host)) {
      return new Promise<T>((resolve, reject) =>
        this.held.push(() =>
          this.dead.has(host) ? reject(new Error('member gone')) : resolve(undefined as T),
        ),
      );
    }
    return Promise.resolve({ member: host } as T);
  }

  send(): void {}

  /** Settles the held activations (failed if their member is dead by then). */
  release(): void {
    for (const settle of this.held.splice(0)) settle();
  }
}

describe('PoolClient: a placement the topology moved past', () => {
  it('a call that waited for it places again before picking a worker', async () => {
    const m = new Members();
    const client = PoolClient.get(m as unknown as GranaryClient, 'p');
    await client.request('hello');
    expect(new Set(client.placement().values())).to.deep.equal(new Set(['m1', 'm2']));

    // m3 joins: the next call places 2/2/2, its activations on m3 held.
    m.members = ['m1', 'm2', 'm3'];
    m.version = 2;
    m.holdPingsOn.add('m3');
    const first = client.request<{ member: string }>('hello');
    await new Promise((r) => setImmediate(r));
    // m3 crashes while that placement runs; calls made now wait for it.
    m.dead.add('m3');
    m.members = ['m1', 'm2'];
    m.version = 3;
    const calls = [1, 2, 3, 4, 5, 6].map(() => client.request<{ member: string }>('hello'));
    m.release();
    const replies = await Promise.allSettled([first, ...calls]);
    const failed = replies.filter((r) => r.status === 'rejected');
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
    expect(new Set(client.placement().values())).to.deep.equal(new Set(['m1', 'm2']));
  });
});
