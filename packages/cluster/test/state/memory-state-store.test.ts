import { expect } from 'chai';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import { describeStateStoreConformance } from './state-store-conformance';

describe('MemoryStateStore', () => {
  describeStateStoreConformance(async () => {
    const store = new MemoryStateStore();
    return { store, other: store };
  });

  describe('isolation', () => {
    it('copies bytes in and out, so callers cannot change stored state by mutation', async () => {
      const store = new MemoryStateStore();
      const input = Uint8Array.from([1, 2]);
      await store.write('k', 'a', input, { expectedVersion: null, epoch: 1 });
      input[0] = 9;
      const first = await store.read('k', 'a');
      first!.state[1] = 9;
      expect(Array.from((await store.read('k', 'a'))!.state)).to.deep.equal([1, 2]);
      expect(store.size).to.equal(1);
    });
  });
});
