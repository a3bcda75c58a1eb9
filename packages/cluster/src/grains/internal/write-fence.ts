import { MemberFencedError } from '../../errors';
import type { ShardGate } from '../../membership/fencing';

/**
 * The epoch function of an activation's state (PersistentStateOptions.epoch): the claim's epoch
 * captured at activation, so a drain or a shutdown still saves under it, and MemberFencedError
 * once the member's lease is not provably alive (lost, suspended, released). A turn that outlives its member's lease (a stall past maxLoopStallMs, a lost
 * etcd) must not write: the shard's next owner may already have loaded the state, and the
 * store's epoch check lets the old epoch through until that owner writes. Its reads then missed
 * the write, and the caller of the old turn was told it landed. One clock read per write.
 */
export function fencedEpoch(
  gate: ShardGate,
  shard: number,
  kind: string,
  identity: string,
  member: string,
): () => number {
  const epoch = gate.epochOf(shard);
  return () => {
    if (!gate.leaseValid()) throw new MemberFencedError(kind, identity, member);
    return epoch;
  };
}
