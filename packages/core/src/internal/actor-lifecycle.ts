import { AWAITING } from '../dispatcher';
import { DEFAULT_SUPERVISOR_STRATEGY } from '../supervision/one-for-one-strategy';
import {
  PoisonPill,
  RESTARTING,
  STARTED,
  Stop,
  STOPPED,
  STOPPING,
  Terminated,
  Unwatch,
  Watch,
  type TerminatedReason,
} from '../messages';
import type { PID } from '../pid';
import { ActorCell } from './actor-cell';
import {
  F_FAILED,
  F_FINISHING,
  F_RESTARTING,
  F_STOPPING,
  F_SUSPENDED,
  F_UNLISTED,
  PAUSED,
} from './cell-flags';
import { Envelope } from './envelope';
import { Failure, RESTART, RESUME_MAILBOX } from './system-messages';

function keyOf(pid: PID): string {
  return `${pid.address}/${pid.id}`;
}

/**
 * The lifecycle half of an actor: watchers, supervision (failure, restart), and the stop
 * sequence Stopping → children stop → Stopped → unregistered, watchers and parent told.
 * Split from ActorCell (turns and system-message dispatch) to keep each file one concern;
 * ActorContext extends this with the user-facing API, so an actor stays one object.
 */
export abstract class ActorLifecycle extends ActorCell {
  protected addWatcher(watcher: PID): void {
    if ((this.flags & F_FINISHING) !== 0) {
      this.tellTerminated(watcher, this.terminatedWhy());
      return;
    }
    (this.extras().watchers ??= new Map()).set(keyOf(watcher), watcher);
  }

  protected onTerminated(t: Terminated): void {
    const kids = this.kids;
    if (kids !== null && this.runtime.registry.isLocal(t.who) && kids.delete(t.who.id)) {
      if (kids.size === 0) this.kids = null;
      if ((this.flags & F_STOPPING) !== 0) {
        this.tryFinishStop();
        return;
      }
      if ((this.flags & F_RESTARTING) !== 0) this.tryFinishRestart();
    }
    const watching = this.ext?.watching;
    if (watching === undefined || !watching.has(keyOf(t.who))) return;
    if ((this.flags & PAUSED) !== 0) {
      if ((this.flags & F_STOPPING) === 0) (this.extras().deferred ??= []).push(t);
      return;
    }
    watching.delete(keyOf(t.who));
    this.invokeUser(t);
  }

  // ── Supervision ────────────────────────────────────────────────────────────────────────

  fail(reason: unknown, message: unknown): void {
    const rt = this.runtime;
    if ((this.flags & F_STOPPING) !== 0) {
      rt.logger.error({ actor: this.self.toString(), err: reason }, 'actor failed while stopping');
      return;
    }
    rt.logger.warn({ actor: this.self.toString(), err: reason }, 'actor failed');
    this.flags |= F_SUSPENDED;
    const failure = new Failure(this.self, reason, this.extras().stats(), message);
    const parent = this.parent;
    if (parent === undefined) rt.guardianFailure(failure);
    else rt.registry.get(parent).sendSystemMessage(parent, failure);
  }

  protected onChildFailure(f: Failure): void {
    const strategy = this.props.supervisor ?? DEFAULT_SUPERVISOR_STRATEGY;
    strategy.handleFailure(this as never, f.who, f.stats, f.reason, f.message);
  }

  protected sendSystem(pids: PID[], message: unknown): void {
    const registry = this.runtime.registry;
    for (const pid of pids) registry.get(pid).sendSystemMessage(pid, message);
  }

  resumeChildren(...pids: PID[]): void {
    this.sendSystem(pids, RESUME_MAILBOX);
  }

  restartChildren(...pids: PID[]): void {
    this.sendSystem(pids, RESTART);
  }

  stopChildren(...pids: PID[]): void {
    this.sendSystem(pids, new Stop('failed'));
  }

  escalateFailure(reason: unknown, message: unknown): void {
    this.fail(reason, message);
  }

  protected beginRestart(): void {
    if ((this.flags & (F_STOPPING | F_RESTARTING)) !== 0) return;
    this.flags |= F_RESTARTING;
    if (this.kids !== null) this.sendSystem([...this.kids.values()], new Stop());
    this.tryFinishRestart();
  }

  private tryFinishRestart(): void {
    if (this.kids !== null) return;
    this.lifecycle(RESTARTING, () => {
      try {
        this.actor = this.props.producer();
      } catch (error) {
        this.runtime.logger.error({ actor: this.self.toString(), err: error }, 'producer failed');
        this.flags &= ~F_RESTARTING;
        this.beginStop('failed');
        return;
      }
      if (this.ext !== null) this.ext.behaviors = undefined;
      // Started goes first: it is in the system lane, drained before any user message.
      this.pushSystem(STARTED);
      this.unpause(F_RESTARTING | F_SUSPENDED);
    });
  }

  // ── Stopping ───────────────────────────────────────────────────────────────────────────

  /** Stopping → (children stop) → Stopped → unregistered, watchers and parent told. */
  protected beginStop(why: TerminatedReason): void {
    if ((this.flags & F_STOPPING) !== 0) return;
    this.flags |= F_STOPPING;
    if (why === 'failed') this.flags |= F_FAILED;
    const x = this.ext;
    if (x !== null && x.receiveTimer !== undefined) x.receiveTimer.cancel();
    if (this.kids !== null) this.sendSystem([...this.kids.values()], new Stop());
    this.lifecycle(STOPPING, () => this.tryFinishStop());
  }

  private tryFinishStop(): void {
    if (this.kids !== null || (this.flags & F_FINISHING) !== 0) return;
    if (this.sched === AWAITING) return; // Stopping still running: its `after` comes back here
    this.flags |= F_FINISHING;
    this.lifecycle(STOPPED, () => this.finalize());
  }

  protected terminatedWhy(): TerminatedReason {
    return (this.flags & F_FAILED) !== 0 ? 'failed' : 'stopped';
  }

  protected tellTerminated(to: PID, why: TerminatedReason): void {
    this.runtime.registry.get(to).sendSystemMessage(to, new Terminated(this.self, why));
  }

  private finalize(): void {
    const rt = this.runtime;
    const unlisted = (this.flags & F_UNLISTED) !== 0;
    if (!unlisted) rt.registry.remove(this.self);
    rt.dispatcher.retire(this);
    const why = this.terminatedWhy();
    // Never a silent drop: what was still queued is dead-lettered (pending requests reject).
    for (const entry of this.drainUser()) {
      const e = entry instanceof Envelope ? entry : undefined;
      const message = e === undefined ? entry : e.message;
      if (!(message instanceof PoisonPill)) {
        rt.deadLetters.publish(this.self, message, e?.sender, 'stopped');
      }
    }
    for (let m = this.shiftSystem(); m !== undefined; m = this.shiftSystem()) {
      if (m instanceof Watch) this.tellTerminated(m.watcher, why);
    }
    const x = this.ext;
    if (x !== null) {
      for (const w of x.watchers?.values() ?? []) this.tellTerminated(w, why);
      const unwatch = new Unwatch(this.self);
      for (const w of x.watching?.values() ?? []) rt.registry.get(w).sendSystemMessage(w, unwatch);
    }
    if (this.parent !== undefined) this.tellTerminated(this.parent, why);
    else if (!unlisted) rt.topLevelTerminated(this.self);
  }
}
