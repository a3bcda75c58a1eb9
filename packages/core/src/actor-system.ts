import { SYSTEM_CLOCK, type Clock, type RandomSource } from './clock';
import { DeadLetterProcess, DeadLetters, type DeadLetterOptions } from './dead-letters';
import { Dispatcher } from './dispatcher';
import type { ExpiredDrops } from './expired-drops';
import { SystemShutdownError } from './errors';
import { EventStream } from './event-stream';
import { FutureProcess } from './future-process';
import { ActorCell } from './internal/actor-cell';
import { Guardian } from './internal/guardian';
import type { Runtime } from './internal/runtime';
import type { Failure } from './internal/system-messages';
import { createStderrLogger, type Logger } from './logger';
import type { PID } from './pid';
import { ProcessRegistry } from './process-registry';
import { RootContext } from './root-context';
import { DEFAULT_SUPERVISOR_STRATEGY } from './supervision/one-for-one-strategy';
import type { SupervisorStrategy } from './supervision/supervisor-strategy';
import { TimerWheel, type TimerWheelOptions } from './timer-wheel';

/** Options of an ActorSystem. */
export interface ActorSystemOptions {
  /**
   * Name, in logs and errors.
   * @default 'granary'
   */
  name?: string;
  /**
   * Messages one actor processes per turn before the next actor gets the loop.
   * @default 64
   */
  throughput?: number;
  /**
   * The dispatcher yields to the event loop (setImmediate) after running this long.
   * @default 1
   */
  timeSliceMs?: number;
  /**
   * Dead-letter logging limit (every dead letter is still counted and published).
   * @default { logPerSecond: 10 }
   */
  deadLetterThrottle?: DeadLetterOptions;
  /**
   * Where the runtime logs (pino-compatible).
   * @default createStderrLogger('warn')
   */
  logger?: Logger | undefined;
  /**
   * The shared timer wheel's resolution and size.
   * @default { tickMs: 10, slots: 512 }
   */
  timers?: TimerWheelOptions;
  /**
   * How top-level actors are supervised.
   * @default DEFAULT_SUPERVISOR_STRATEGY (one-for-one, restart, 10 retries in 10 s)
   */
  supervisor?: SupervisorStrategy;
  /**
   * `shutdown()` stops waiting for actors after this long (an actor stuck in an await that
   * never settles) and logs which ones did not stop.
   * @default 10000
   */
  shutdownTimeoutMs?: number;
  /**
   * Time for request deadlines, receive timeouts, restart windows, dead-letter throttling and
   * the timer wheel. A simulation passes a virtual clock (the same one to every node).
   * @default SYSTEM_CLOCK (Date.now, performance.now, setTimeout)
   */
  clock?: Clock;
  /**
   * Uniform numbers in [0, 1) for what runs on this system and draws jitter or random
   * choices (`system.random`). A simulation passes a seeded one.
   * @default Math.random
   */
  random?: RandomSource;
}

/** Defaults of {@link ActorSystemOptions}. */
export const DEFAULT_ACTOR_SYSTEM_OPTIONS = {
  name: 'granary',
  throughput: 64,
  timeSliceMs: 1,
  shutdownTimeoutMs: 10_000,
} as const;

// Every context knows its system: declared here, so context.ts need not import this module.
declare module './context' {
  interface SenderContext {
    /** The ActorSystem this context belongs to. */
    readonly system: ActorSystem;
  }
}

/**
 * What remoting attaches as `system.remote`. The remote module widens it by declaration
 * merging (`declare module '@granary/core' { interface SystemRemote { ... } }`) instead of
 * editing the system.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SystemRemote {}

/**
 * The actor runtime of one node: one dispatcher, one process registry, one event stream,
 * dead letters and one timer wheel.
 *
 * @example
 * const system = new ActorSystem({ name: 'demo' });
 * const pid = system.root.spawn(Props.fromFunc((ctx) => ctx.respond(`hello ${ctx.message}`)));
 * console.log(await system.root.request(pid, 'world'));
 * await system.shutdown();
 */
export class ActorSystem implements Runtime {
  readonly name: string;
  readonly logger: Logger;
  readonly eventStream: EventStream;
  readonly deadLetters: DeadLetters;
  readonly registry: ProcessRegistry;
  readonly dispatcher: Dispatcher;
  readonly timers: TimerWheel;
  readonly root: RootContext;
  /** This system's time (see ActorSystemOptions.clock). */
  readonly clock: Clock;
  /** This system's random numbers (see ActorSystemOptions.random). */
  readonly random: RandomSource;
  /** Requests dropped because their deadline had passed, by stage (see ExpiredDrops). */
  readonly expired: ExpiredDrops = { beforeSend: 0, onArrival: 0 };
  /** Extension point for other modules (by a name they own), e.g. cluster state. */
  readonly extensions = new Map<string, unknown>();
  /** Set by remoting when it starts. */
  remote: (SystemRemote & object) | undefined = undefined;
  /** Live top-level actors (a count, not a map: the registry already holds them). */
  private topLevelCount = 0;
  private readonly guardian: Guardian;
  private readonly shutdownHooks: (() => void | Promise<void>)[] = [];
  private readonly shutdownTimeoutMs: number;
  private shuttingDown: Promise<void> | undefined = undefined;
  private allStopped: (() => void) | undefined = undefined;

  constructor(options: ActorSystemOptions = {}) {
    const o = { ...DEFAULT_ACTOR_SYSTEM_OPTIONS, ...options };
    this.name = o.name;
    this.shutdownTimeoutMs = o.shutdownTimeoutMs;
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.random = options.random ?? Math.random;
    this.logger = (options.logger ?? createStderrLogger('warn')).child({ system: this.name });
    const onError = (where: string) => (err: unknown) => this.logger.error({ err }, where);
    this.eventStream = new EventStream(onError('event stream subscriber failed'));
    this.deadLetters = new DeadLetters(
      this.eventStream,
      this.logger,
      o.deadLetterThrottle,
      this.clock,
    );
    this.registry = new ProcessRegistry(
      new DeadLetterProcess(this.deadLetters, () => this.registry),
    );
    this.deadLetters.registry = this.registry;
    this.dispatcher = new Dispatcher(
      { throughput: o.throughput, timeSliceMs: o.timeSliceMs },
      onError('dispatcher turn failed'),
    );
    this.timers = new TimerWheel(o.timers, onError('timer callback failed'), this.clock);
    this.root = new RootContext(this);
    this.guardian = new Guardian(
      this.registry,
      this.timers,
      this.logger,
      o.supervisor ?? DEFAULT_SUPERVISOR_STRATEGY,
      () => this.topLevelPids(),
    );
  }

  /** This node's address: `'nonhost'` until remoting sets `host:port`. */
  get address(): string {
    return this.registry.address;
  }

  set address(value: string) {
    this.registry.address = value;
  }

  /** True once shutdown() was called. */
  get isShuttingDown(): boolean {
    return this.shuttingDown !== undefined;
  }

  /** Runs `hook` during shutdown, after every actor stopped (remoting closes its server). */
  onShutdown(hook: () => void | Promise<void>): void {
    this.shutdownHooks.push(hook);
  }

  /**
   * Stops every actor (children before parents, running their Stopping/Stopped handlers),
   * runs the shutdown hooks (last registered first), rejects pending requests with
   * SystemShutdownError, and stops the timer wheel. Idempotent.
   */
  shutdown(): Promise<void> {
    return (this.shuttingDown ??= this.doShutdown());
  }

  private async doShutdown(): Promise<void> {
    if (this.topLevelCount > 0) {
      const stopped = new Promise<void>((resolve) => (this.allStopped = resolve));
      for (const pid of this.topLevelPids()) this.registry.get(pid).stop(pid);
      let timer: unknown;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = this.clock.setTimer(() => resolve(true), this.shutdownTimeoutMs);
      });
      const late = await Promise.race([stopped.then(() => false), timedOut]);
      this.clock.clearTimer(timer);
      if (late) {
        const ids = this.topLevelPids().map((pid) => pid.id);
        this.logger.error({ actors: ids }, 'shutdown: actors did not stop (shutdownTimeoutMs)');
      }
    }
    for (const hook of [...this.shutdownHooks].reverse()) {
      try {
        await hook();
      } catch (err) {
        this.logger.error({ err }, 'shutdown hook failed');
      }
    }
    for (const p of [...this.registry.localProcesses()]) {
      if (p instanceof FutureProcess) p.fail(new SystemShutdownError(this.name));
    }
    this.timers.stop();
    this.deadLetters.close();
  }

  /** @internal */
  topLevelSpawned(_pid: PID): void {
    this.topLevelCount++;
  }

  /** @internal */
  topLevelTerminated(_pid: PID): void {
    if (--this.topLevelCount === 0 && this.allStopped !== undefined) this.allStopped();
  }

  /** PIDs of the live top-level actors (a registry scan: shutdown and all-for-one only). */
  private topLevelPids(): PID[] {
    const pids: PID[] = [];
    for (const p of this.registry.localProcesses()) {
      if (p instanceof ActorCell && p.parent === undefined && !p.dead) pids.push(p.self);
    }
    return pids;
  }

  /** @internal */
  guardianFailure(failure: Failure): void {
    this.guardian.handle(failure);
  }
}
