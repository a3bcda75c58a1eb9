import { expect } from 'chai';
import type { Activation } from '../../src/grains/activation';
import { ActivationTable } from '../../src/grains/internal/activation-table';
import { grainIdOf } from '../../src/grains/internal/call-headers';
import { fnv1a32, shardOf } from '../../src/placement/shard-of';

/** Just what the table reads of an activation. */
function fake(identity: string, shardCount: number): Activation {
  return { identity, shard: shardOf(identity, shardCount) } as Activation;
}

function slotOf(shardCount: number): ActivationTable {
  return new ActivationTable(shardCount);
}

describe('ActivationTable', () => {
  describe('by identity', () => {
    it('finds, removes and re-adds activations like a Map, through growth, removal and shrinking', () => {
      const shards = 4;
      const slot = slotOf(shards);
      const model = new Map<string, Activation>();
      let seed = 7;
      const rnd = (n: number): number => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed % n;
      };
      for (let step = 0; step < 40_000; step++) {
        const id = `g-${rnd(3000)}`;
        const shard = shardOf(id, shards);
        const found = slot.get(shard, fnv1a32(id), id, 0);
        expect(found).to.equal(model.get(id));
        if (found === undefined) {
          const a = fake(id, shards);
          slot.add(a, fnv1a32(id));
          model.set(id, a);
        } else if (rnd(3) > 0) {
          slot.remove(found);
          model.delete(id);
        }
        if (step % 5000 === 0) expect(slot.count).to.equal(model.size);
      }
      expect(slot.count).to.equal(model.size);
      for (let s = 0; s < shards; s++) {
        const inShard = slot
          .inShard(s)
          .map((a) => a.identity)
          .sort();
        const expected = [...model.values()]
          .filter((a) => a.shard === s)
          .map((a) => a.identity)
          .sort();
        expect(inShard).to.deep.equal(expected);
      }
    });

    it('drops a shard once its last activation is removed, and ignores one it does not hold', () => {
      const slot = slotOf(1);
      const as = Array.from({ length: 100 }, (_, i) => fake(`x${i}`, 1));
      for (const a of as) slot.add(a);
      slot.remove(fake('x1', 1)); // same identity, another object: not in the table
      expect(slot.count).to.equal(100);
      for (const a of as) slot.remove(a);
      expect(slot.count).to.equal(0);
      expect(slot.inShard(0)).to.deep.equal([]);
      expect(slot.get(0, fnv1a32('x5'), 'x5', 0)).to.equal(undefined);
    });
  });

  describe('by grain id', () => {
    it('finds an identity inside a grain id without cutting it out, and only a whole one', () => {
      const table = slotOf(8);
      const a = fake('cart-7', 8);
      const b = fake('cart-77', 8);
      table.add(a);
      table.add(b);
      const id = grainIdOf('cart', 'cart-7');
      const from = id.length - 'cart-7'.length;
      expect(fnv1a32(id, from)).to.equal(fnv1a32('cart-7'));
      expect(table.get(a.shard, fnv1a32(id, from), id, from)).to.equal(a);
      const longer = grainIdOf('cart', 'cart-77');
      expect(table.get(b.shard, fnv1a32(longer, from), longer, from)).to.equal(b);
      // The same hash and shard as 'cart-7' but a longer id: not a match.
      expect(table.get(a.shard, fnv1a32('cart-7'), `${id}x`, from)).to.equal(undefined);
    });
  });
});
