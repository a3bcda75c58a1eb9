import { NameExistsError } from './errors';
import { PID } from './pid';
import type { LocalProcess, Process } from './process';

/** Resolves a PID of another node to the process that reaches it (remote plugs in here). */
export type AddressResolver = (pid: PID) => Process | undefined;

/** The address of every PID until remoting sets a real one. */
export const NONHOST = 'nonhost';

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
  private sequence = 0;

  constructor(
    /** Where a PID that resolves to nothing goes. */
    private readonly deadLetter: Process,
  ) {}

  /** A fresh local id: `prefix` + a counter (`$1`, `future$2`, ...). */
  nextId(prefix = '$'): string {
    return prefix + ++this.sequence;
  }

  /**
   * Registers a process under a local id and returns its PID.
   * @throws NameExistsError if the id is taken
   */
  add(id: string, process: Process): PID {
    if (this.local.has(id)) throw new NameExistsError(id);
    this.local.set(id, process);
    const pid = new PID(this.address, id);
    if ((process as LocalProcess).owner === this) pid._p = process as LocalProcess;
    return pid;
  }

  /** Unregisters a local process (no-op for other addresses or unknown ids). */
  remove(pid: PID): void {
    if (this.isLocal(pid)) this.local.delete(pid.id);
  }

  /** The process for `pid`; never undefined (dead-letter process as the last resort). */
  get(pid: PID): Process {
    const cached = pid._p;
    if (cached !== undefined && cached.owner === this && !cached.dead) return cached;
    if (this.isLocal(pid)) {
      const p = this.local.get(pid.id);
      if (p === undefined) return this.deadLetter;
      if ((p as LocalProcess).owner === this) pid._p = p as LocalProcess;
      return p;
    }
    for (const resolve of this.resolvers) {
      const p = resolve(pid);
      if (p !== undefined) return p;
    }
    return this.deadLetter;
  }

  /** The local process with this id, if any. */
  getLocal(id: string): Process | undefined {
    return this.local.get(id);
  }

  /** Adds a resolver for PIDs of other addresses; the first one that answers wins. */
  addAddressResolver(resolver: AddressResolver): void {
    this.resolvers.push(resolver);
  }

  /** True if the PID names a process of this node. */
  isLocal(pid: PID): boolean {
    return pid.address === this.address || pid.address === NONHOST;
  }

  /** Every registered local process. */
  localProcesses(): IterableIterator<Process> {
    return this.local.values();
  }

  /** Registered local processes (actors and pending futures). */
  get size(): number {
    return this.local.size;
  }
}
