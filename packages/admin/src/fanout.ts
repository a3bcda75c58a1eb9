import { PID } from '@granary/core';
import type { Cluster, Member } from '@granary/cluster';
import type { AdminActor } from './admin-actor';
import { ADMIN_ACTOR, type AdminAsk } from './admin-protocol';

/** A member that did not answer within the deadline, and why. */
export interface NotAnswering {
  id: string;
  address: string;
  error: string;
}

/** The answers of the members asked, and which did not answer. */
export interface FanoutResult<T> {
  answers: Array<{ member: Member; answer: T }>;
  notAnswering: NotAnswering[];
}

/**
 * Asks one member's admin actor (this member answers itself without a message). Rejects with
 * the member's error or the request's timeout.
 */
export function askMember<T>(
  cluster: Cluster,
  local: AdminActor,
  member: Pick<Member, 'id' | 'address'>,
  ask: AdminAsk,
  timeoutMs: number,
): Promise<T> {
  if (member.id === cluster.id) return Promise.resolve(local.answer(ask) as T);
  return cluster.system.root.request<T>(new PID(member.address, ADMIN_ACTOR), ask, { timeoutMs });
}

/**
 * Asks every member of the current topology at once, within one deadline: a member killed or
 * paused mid-request is listed in `notAnswering` while the others' answers come back.
 */
export async function askAll<T>(
  cluster: Cluster,
  local: AdminActor,
  ask: AdminAsk,
  timeoutMs: number,
): Promise<FanoutResult<T>> {
  const members = cluster.topology.members;
  const settled = await Promise.allSettled(
    members.map((m) => askMember<T>(cluster, local, m, ask, timeoutMs)),
  );
  const result: FanoutResult<T> = { answers: [], notAnswering: [] };
  settled.forEach((s, i) => {
    const member = members[i]!;
    if (s.status === 'fulfilled') result.answers.push({ member, answer: s.value });
    else {
      const e = s.reason as { name?: string; message?: string };
      result.notAnswering.push({
        id: member.id,
        address: member.address,
        error: `${e?.name ?? 'Error'}: ${e?.message ?? String(s.reason)}`,
      });
    }
  });
  return result;
}
