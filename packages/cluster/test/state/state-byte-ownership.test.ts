import { expect } from 'chai';
import { jsonStateCodec } from '../../src/state/codecs/json-state-codec';
import type { StateCodec } from '../../src/state/codecs/state-codec';
import { MemoryStateStore } from '../../src/state/memory/memory-state-store';
import { PersistentState } from '../../src/state/persistent-state';

interface Counter {
  n: number;
}

/**
 * A codec that encodes into two scratch buffers in turn, returning a view of part of one (as
 * fast binary encoders reuse their output buffer): bytes it returned change two encodes later.
 */
function scratchCodec(): StateCodec<Counter> {
  const scratch = [new Uint8Array(64), new Uint8Array(64)];
  let turn = 0;
  const json = jsonStateCodec<Counter>();
  return {
    name: 'scratch',
    encode: (state) => {
      const bytes = json.encode(state);
      const into = scratch[turn++ % 2]!;
      into.set(bytes);
      return into.subarray(0, bytes.length);
    },
    decode: (bytes) => json.decode(bytes),
  };
}

describe('state bytes ownership', () => {
  it('PersistentState keeps its own copy of the stored bytes: a codec reusing its buffer cannot fake a change', async () => {
    const store = new MemoryStateStore();
    const codec = scratchCodec();
    const ps = new PersistentState<Counter>({
      store,
      kind: 'k',
      id: 'a',
      codec,
      epoch: () => 1,
      initial: () => ({ n: 0 }),
    });
    await ps.load(Date.now() + 5000);
    ps.state = { n: 1 };
    expect(await ps.write()).to.equal(1);
    codec.encode({ n: 9 });
    codec.encode({ n: 9 }); // now in the buffer the written bytes were a view of
    expect(await ps.writeIfChanged()).to.equal(1); // { n: 1 } is unchanged: no write
    expect((await store.read('k', 'a'))!.version).to.equal(1);
    ps.state = { n: 2 };
    expect(await ps.writeIfChanged()).to.equal(2);
  });

  it('MemoryStateStore copies Buffers in and out, so neither side can change the other', async () => {
    const store = new MemoryStateStore();
    const input = Buffer.from([1, 2, 3]);
    await store.write('k', 'a', input, { expectedVersion: null, epoch: 1 });
    input[0] = 9;
    const first = (await store.read('k', 'a'))!.state;
    expect(Array.from(first)).to.deep.equal([1, 2, 3]);
    first[1] = 9;
    expect(Array.from((await store.read('k', 'a'))!.state)).to.deep.equal([1, 2, 3]);
  });

  it('jsonStateCodec output (a pooled Buffer) round-trips through MemoryStateStore', async () => {
    const codec = jsonStateCodec<Counter>();
    const store = new MemoryStateStore();
    await store.write('k', 'a', codec.encode({ n: 41 }), { expectedVersion: null, epoch: 1 });
    expect(codec.decode((await store.read('k', 'a'))!.state)).to.deep.equal({ n: 41 });
  });
});
