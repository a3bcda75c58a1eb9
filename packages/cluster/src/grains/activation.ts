import { randomBytes } from 'node:crypto';
import type { PID } from '@granary/core';
import type { KindSlot } from './internal/kind-slot';

/** A message held for an activation that is deactivating (delivered to the next one). */
export interface HeldMessage {
  message: unknown;
  sender: PID | undefined;
  header: Record<string, string> | undefined;
  /** A send: acknowledge to `sender` once accepted, and show the grain `replyTo` instead. */
  ack: boolean;
  /** A send's sender as the grain sees it (the `sender` option of Cluster.send). */
  replyTo?: PID;
}

/** Activation ids: a random per-process prefix and a counter, so they never repeat. */
const ID_PREFIX = randomBytes(6).toString('hex');
let idSeq = 0;

/**
 * One activation of one grain on this member. Its state machine:
 *
 * ```
 *   (none) ──first message──▶ active ──idle / drain / not owner──▶ deactivating ──onDeactivate done──▶ (none)
 *                              ▲                                        │ messages arriving here are held
 *                              └───── held messages start a new one ◀───┘ (after the old one ended)
 * ```
 */
export class Activation {
  state: 'active' | 'deactivating' = 'active';
  /** The core actor running the grain. */
  pid!: PID;
  /** Messages posted to the actor and not yet finished. */
  inflight = 0;
  /** performance.now() of the last message that influences idle time. */
  lastActivity: number;
  /** Neighbours in the kind's idle list (ordered by lastActivity). */
  prevIdle: Activation | undefined = undefined;
  nextIdle: Activation | undefined = undefined;
  listed = false;
  /** Held while deactivating (bounded by the kind's mailbox capacity). */
  held: HeldMessage[] | undefined = undefined;
  /** Resolved when the activation has ended (drain waits on it). */
  private endWaiters: Array<() => void> | undefined = undefined;

  constructor(
    readonly slot: KindSlot,
    readonly identity: string,
    readonly shard: number,
    now: number,
  ) {
    this.lastActivity = now;
    this.seq = ++idSeq;
  }

  /** Number part of the activation id (the string is built on demand: one less per grain). */
  private readonly seq: number;

  /** Unique per activation, across members and restarts. */
  get id(): string {
    return `${ID_PREFIX}-${this.seq}`;
  }

  /** Resolves once the activation has ended. */
  ended(): Promise<void> {
    return new Promise((resolve) => (this.endWaiters ??= []).push(resolve));
  }

  /** @internal called by the activator when onDeactivate has run. */
  finish(): void {
    const waiters = this.endWaiters;
    this.endWaiters = undefined;
    if (waiters) for (const w of waiters) w();
  }
}
