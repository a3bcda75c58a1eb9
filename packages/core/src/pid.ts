/**
 * The address of a process (an actor, a request's future, a remote actor): `address` is the
 * node (`'nonhost'` until remoting starts, then `host:port`), `id` is unique on that node.
 *
 * @example
 * const pid = system.root.spawn(Props.fromFunc((ctx) => ctx.respond(ctx.message)));
 * pid.toString(); // 'nonhost/$1'
 */
export class PID {
  /**
   * The process this PID resolved to (a `LocalProcess`, or the remote's process for another
   * node's endpoint), so sends skip the registry lookup. Checked against its owner and liveness
   * before every use (see ProcessRegistry.get and cacheRoute).
   * Typed `unknown` so this file imports no process type (they import PID); the registry and
   * `deliver` read it as a LocalProcess.
   * @internal
   */
  _p: unknown = undefined;

  /**
   * Set on the sender of a message that came from another node: the route back over the link
   * it came on. A reply to an address this node may not dial goes back that way (the remote's
   * LinkRoute), so a peer cannot make a node dial an address it names.
   * @internal
   */
  _via: object | undefined = undefined;

  constructor(
    readonly address: string,
    readonly id: string,
  ) {}

  /** `address/id`. */
  toString(): string {
    return `${this.address}/${this.id}`;
  }

  /** Same address and id (PIDs are values; two objects may name one process). */
  equals(other: PID | undefined | null): boolean {
    return (
      other !== undefined &&
      other !== null &&
      other.id === this.id &&
      other.address === this.address
    );
  }

  /** Plain form for JSON and logs. */
  toJSON(): { address: string; id: string } {
    return { address: this.address, id: this.id };
  }
}
