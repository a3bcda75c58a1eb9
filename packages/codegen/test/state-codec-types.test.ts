import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { GOLDEN_DIR } from './helpers/paths';
import { scratchDir, typeCheck } from './helpers/type-check';

/**
 * A user's module declaring a generated grain's state with protobufStateCodec: the codec's type
 * must be the generated interface itself (what decode hands back, as the README says), so the
 * grain's `this.state` and the kind's `initial()` are checked against every field.
 */
function userModule(golden: string): string {
  return `import { MemoryStateStore, protobufStateCodec, type StateCodec } from '@granary/cluster';
import { PongMessage, PongerGrain, pongerKind } from '${golden}';

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const codec = protobufStateCodec(PongMessage);
export const exact: Equal<typeof codec, StateCodec<PongMessage>> = true;

class Ponger extends PongerGrain<PongMessage> {
  override ping(): PongMessage {
    return { cnt: (BigInt(this.state.cnt) + 1n).toString() };
  }
}
const store = new MemoryStateStore();
export const good = pongerKind(() => new Ponger(), {
  state: { store, codec: protobufStateCodec(PongMessage), initial: () => PongMessage.create() },
});
export const bad = pongerKind(() => new Ponger(), {
  // @ts-expect-error an initial state without cnt: this.state.cnt would be undefined at run time
  state: { store, codec: protobufStateCodec(PongMessage), initial: () => ({}) },
});
`;
}

describe('protobufStateCodec with a generated message', () => {
  it('is a StateCodec of the generated interface, so a kind refuses an incomplete initial state', function () {
    this.timeout(60_000);
    const dir = scratchDir();
    const golden = join(GOLDEN_DIR, 'messages', 'protos.granary');
    const file = join(dir, 'user-state.ts');
    writeFileSync(file, userModule(`./${relative(dir, golden).split('\\').join('/')}`));
    expect(typeCheck([file])).to.equal('');
  });
});
