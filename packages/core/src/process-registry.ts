import { InvalidArgumentError, NameExistsError } from './errors';
import { FUTURE_PREFIX, FUTURE_SLOTS, FutureIds, futureSlotOf } from './internal/future-ids';
import { PID } from './pid';
import type { LocalProcess, Process } from './process';

/** Resolves a PID of another node to the process that reaches it (remote plugs in here). */
export type AddressResolver = (pid: PID) => Process | undefined;

/** The address of every PID until remoting sets a real one. */
export const NONHOST = 'nonhost';

/**
 * Request futures are registered under ids with this prefix, a table slot and a random token:
 * `f$<slot><token>`, 12 characters (see FutureIds).
 */
export { FUTURE_PREFIX };

/** A process registered by sequence number (a request's future). */
export interface SequencedProcess extends Process {
  readonly seq: number;
  /**
   * The id {@link ProcessRegistry.futurePid} gave it, once something read its PID; undefined
   * before (nothing outside the process can name it yet).
   */
  readonly issuedId: string | undefined;
}

/**
 * Every process of one ActorSystem by id, plus the resolvers for other addresses.
 * `get(pid)`: local if `pid.address` is this node's address (or `'nonhost'`), else the first
 * resolver that answers, else the dead-letter process. Local lookups are cached on the PID,
 * so a repeated send costs no map lookup.
 */
export class ProcessRegistry {
  /** This node's address: `'nonhost'` until remoting starts, then `host:port`. */
  address = NONHOST;
  private readonly local = new Map<string, Process>();
  private readonly resolvers: AddressResolver[] = [];
  /**
   * The owner of processes of other nodes that may be cached on their PIDs (see cacheRoute):
   * distinct from the registry itself, so `deliver` still tells them from local processes.
   */
  readonly remoteOwner: object = {};
  /** Processes that take every local id under a prefix (few: scanned on a lookup miss). */
  private readonly prefixed: Array<{ prefix: string; process: Process }> = [];
  private sequence = 0;
  private futureSeq = 0;
  /**
   * Futures by sequence number, in FUTURE_SLOTS slots: more requests in flight than that share
   * an overflow map. A request is the hottest registration, and a string-keyed Map set+delete
   * costs ~150-250 ns here, more than the rest of a local round trip; a slot write ~1 ns.
   */
  private readonly futures = new Array<SequencedProcess | undefined>(FUTURE_SLOTS);
  private readonly futureOverflow = new Map<number, SequencedProcess>();
  /** Overflowed futures whose PID was made, by its id (the id names a slot they are not in). */
  private readonly futureOverflowIds = new Map<string, SequencedProcess>();
  private futureCount = 0;
  private readonly ids = new FutureIds();

  constructor(
    /** Where a PID that resolves to nothing goes. */
    private readonly deadLetter: Process,
  ) {}

  /** A fresh local id: `prefix` + a counter (`$1`, `f$2`, ...). */
  nextId(prefix = '$'): string {
    return prefix + ++this.sequence;
  }

  /**
   * Registers a process under a local id and returns its PID.
   * @throws NameExistsError if the id is taken
   */
  add(id: string, process: Process): PID {
    if (this.local.has(id)) throw new NameExistsError(id);
    if (id.startsWith(FUTURE_PREFIX)) {
      throw new InvalidArgumentError('id', `the prefix ${FUTURE_PREFIX} is reserved for requests`);
    }
    this.local.set(id, process);
    const pid = new PID(this.address, id);
    if ((process as LocalProcess).owner === this) pid._p = process;
    return pid;
  }

  /** The sequence number the next `addFuture` will use. */
  nextFutureSeq(): number {
    return ++this.futureSeq;
  }

  /**
   * Registers a request's future by its sequence number (a table slot, not a Map entry). Its
   * PID is made by {@link futurePid} only when something reads it: a local reply does not need
   * one.
   */
  addFuture(process: SequencedProcess & LocalProcess): void {
    const slot = process.seq & (FUTURE_SLOTS - 1);
    if (this.futures[slot] === undefined) this.futures[slot] = process;
    else this.futureOverflow.set(process.seq, process);
    this.futureCount++;
  }

  /**
   * The PID of a future added with addFuture, `f$<slot><token>` (cached on it, so sends to it
   * skip lookups); a lookup of its id finds it only with the token.
   */
  futurePid(process: SequencedProcess & LocalProcess): PID {
    const slot = process.seq & (FUTURE_SLOTS - 1);
    const id = this.ids.make(slot);
    const pid = new PID(this.address, id);
    pid._p = process;
    if (this.futures[slot] !== process && this.futureOverflow.get(process.seq) === process) {
      this.futureOverflowIds.set(id, process);
    }
    return pid;
  }

  /** Unregisters a future added with addFuture. */
  removeFuture(process: SequencedProcess): void {
    const slot = process.seq & (FUTURE_SLOTS - 1);
    if (this.futures[slot] === process) this.futures[slot] = undefined;
    else if (this.futureOverflow.delete(process.seq)) {
      const id = process.issuedId;
      if (id !== undefined) this.futureOverflowIds.delete(id);
    } else return;
    this.futureCount--;
  }

  /** The future whose PID has exactly this id (slot and token), if pending. */
  private getFuture(id: string): SequencedProcess | undefined {
    const slot = futureSlotOf(id);
    if (slot < 0) return undefined;
    const p = this.futures[slot];
    if (p !== undefined && p.issuedId === id) return p;
    return this.futureOverflowIds.size === 0 ? undefined : this.futureOverflowIds.get(id);
  }

  /**
   * Routes every local id that starts with `prefix` and is not registered itself to `process`
   * (a grain kind's router takes `$g/<kind>/<identity>`: one process for any number of
   * virtual ids, each reachable from other nodes by its PID). `post` gets the PID, so a route
   * that is a LocalProcess of this registry is cached on the PIDs it takes like any local
   * process (it sets `dead` when it goes away, and cached PIDs then miss).
   * @throws NameExistsError if the prefix is taken
   * @throws InvalidArgumentError for an empty or reserved prefix
   */
  addPrefix(prefix: string, process: Process): void {
    if (prefix.length === 0 || prefix.startsWith(FUTURE_PREFIX)) {
      throw new InvalidArgumentError(
        'prefix',
        `must be non-empty and not start with ${FUTURE_PREFIX}`,
      );
    }
    if (this.prefixed.some((r) => r.prefix === prefix)) throw new NameExistsError(prefix);
    this.prefixed.push({ prefix, process });
  }

  /** Removes a prefix route added with addPrefix (no-op if absent). */
  removePrefix(prefix: string): void {
    const i = this.prefixed.findIndex((r) => r.prefix === prefix);
    if (i >= 0) this.prefixed.splice(i, 1);
  }

  /** Unregisters a local process (no-op for other addresses or unknown ids). */
  remove(pid: PID): void {
    if (!this.isLocal(pid)) return;
    if (pid.id.startsWith(FUTURE_PREFIX)) {
      const p = this.getFuture(pid.id);
      if (p !== undefined) this.removeFuture(p);
    } else this.local.delete(pid.id);
  }

  /** The process for `pid`; never undefined (dead-letter process as the last resort). */
  get(pid: PID): Process {
    const cached = pid._p as LocalProcess | undefined;
    if (
      cached !== undefined &&
      !cached.dead &&
      (cached.owner === this || cached.owner === this.remoteOwner)
    ) {
      return cached;
    }
    if (this.isLocal(pid)) {
      const id = pid.id;
      const p =
        (id.startsWith(FUTURE_PREFIX) ? this.getFuture(id) : this.local.get(id)) ??
        this.byPrefix(id);
      if (p === undefined) return this.deadLetter;
      if ((p as LocalProcess).owner === this) pid._p = p;
      return p;
    }
    for (const resolve of this.resolvers) {
      const p = resolve(pid);
      if (p !== undefined) return p;
    }
    return this.deadLetter;
  }

  /**
   * Caches `route` on `pid` as `get` does after a lookup, for a runtime that knows where a PID
   * it makes routes. A live local process of this registry is cached on a PID of this node: a
   * grain caller making the PID of a grain on its own member caches the kind's router, sparing
   * each new identity the map miss and prefix scan of a first `get`. A live process of another
   * node whose owner is {@link remoteOwner} is cached on a PID of that node: the remote caches
   * an endpoint's process, so later sends skip the address check, the resolvers and their
   * endpoint lookup (~50 ns of a remote send, measured in remote-throughput); it marks the
   * process dead when its endpoint is removed. `get` checks either before every use.
   */
  cacheRoute(pid: PID, route: Process): void {
    const p = route as LocalProcess;
    if (p.dead) return;
    if (p.owner === this ? this.isLocal(pid) : p.owner === this.remoteOwner && !this.isLocal(pid))
      pid._p = p;
  }

  /** The local process with this id, if any. */
  getLocal(id: string): Process | undefined {
    if (id.startsWith(FUTURE_PREFIX)) return this.getFuture(id);
    return this.local.get(id) ?? this.byPrefix(id);
  }

  /** The prefix route of `id`, if any. */
  private byPrefix(id: string): Process | undefined {
    for (const r of this.prefixed) if (id.startsWith(r.prefix)) return r.process;
    return undefined;
  }

  /** Adds a resolver for PIDs of other addresses; the first one that answers wins. */
  addAddressResolver(resolver: AddressResolver): void {
    this.resolvers.push(resolver);
  }

  /** True if the PID names a process of this node. */
  isLocal(pid: PID): boolean {
    return pid.address === this.address || pid.address === NONHOST;
  }

  /** Every registered local process (actors, then pending futures). */
  *localProcesses(): IterableIterator<Process> {
    yield* this.local.values();
    for (const p of this.futures) if (p !== undefined) yield p;
    yield* this.futureOverflow.values();
  }

  /** Registered local processes (actors and pending futures). */
  get size(): number {
    return this.local.size + this.futureCount;
  }
}
