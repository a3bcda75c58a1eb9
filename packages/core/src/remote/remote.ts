import type { ActorSystem } from '../actor-system';
import { EndpointUnavailableError, InvalidOptionError } from '../errors';
import { FutureProcess } from '../future-process';
import type { Logger } from '../logger';
import { Terminated, Watch } from '../messages';
import { PID } from '../pid';
import { FUTURE_PREFIX } from '../internal/future-ids';
import { NONHOST } from '../process-registry';
import type { Props } from '../props';
import type { SerializationRegistry } from '../serialization/serialization-registry';
import { serialization as processWideSerialization } from '../serialization/serialization-registry';
import type { Entry, Process } from '../process';
import { entryMessage, entrySender } from '../entry';
import type { Endpoint } from './endpoint';
import { EndpointManager, noRoomFor } from './endpoint-manager';
import type { RemoteStats } from './internal/event-log';
import type { LinkRoute } from './internal/link-route';
import { resolveRemoteOptions } from './internal/resolve-options';
import { authenticates } from './internal/secure-binding';
import { deliverBatch } from './internal/inbound-delivery';
import type { OutboundEnvelope } from './internal/outbound-envelope';
import type { RemoteState } from './internal/remote-state';
import { checkSecureBinding } from './internal/secure-binding';
import { type EventLog, zeroStats } from './internal/event-log';
import { WatchTable } from './internal/watch-table';
import { SYSTEM_FORMAT, WireTypes, registerWireTypes } from './internal/wire';
import { ACTIVATOR_ID, RemoteActivator } from './remote-activator';
import { EndpointConnectedEvent, EndpointTerminatedEvent } from './remote-events';
import type { RemoteOptions } from './remote-options';
import { RemoteProcess, reasonOf } from './remote-process';
import type { RemoteTraffic } from './internal/remote-traffic';
import type { PeerSilence } from './internal/peer-silence';
import type { EnvelopeLimits } from './internal/envelope-limits';

declare module '../actor-system' {
  /** `system.remote` once a {@link Remote} was created for the system. */
  interface SystemRemote {
    readonly address: string;
    /** Frames and bytes this node's links wrote and received; undefined before start. */
    readonly traffic: Readonly<RemoteTraffic> | undefined;
    /** Endpoints (peers this node dials) it keeps now. */
    readonly endpointCount: number;
    start(options?: RemoteOptions): Promise<string>;
    registerKind(kind: string, props: Props): void;
    spawnNamed(
      address: string,
      kind: string,
      name: string,
      options?: RemoteSpawnOptions,
    ): Promise<PID>;
    spawn(address: string, kind: string, options?: RemoteSpawnOptions): Promise<PID>;
    setMembers(addresses: Iterable<string> | undefined): void;
    /** Whether the peer at an address reads what this node writes (see PeerSilence). @internal */
    silenceOf(address: string): PeerSilence | undefined;
    shutdown(): Promise<void>;
  }
}

/** Options of a remote spawn. */
export interface RemoteSpawnOptions {
  /**
   * Reject with TimeoutError when the target node does not answer in time.
   * @default 5000
   */
  timeoutMs?: number;
}

/**
 * gRPC remoting for one ActorSystem: after `start`, PIDs of other `host:port` addresses
 * resolve to their node, so `send`, `request`, `forward`, `watch` and `stop` work across nodes
 * as they do locally.
 *
 * @example
 * const remote = new Remote(system);
 * await remote.start({ host: '127.0.0.1', port: 4020, clusterName: 'shop' });
 * remote.registerKind('echo', Props.fromFunc((ctx) => ctx.respond(ctx.message)));
 * const echo = await remote.spawnNamed('127.0.0.1:4021', 'echo', 'echo-1');
 * await system.root.request(echo, 'hi');
 */
export class Remote {
  private transport: EndpointManager | undefined;
  private state: RemoteState | undefined;
  private readonly kinds = new Map<string, Props>();
  /** Addresses of the cluster's members (setMembers); undefined: no membership told. */
  private members: ReadonlySet<string> | undefined = undefined;
  /** Peers must prove the secret or present a certificate (every link is a member's). */
  private authenticatesPeers = false;
  private stopped = false;
  private starting = false;

  constructor(readonly system: ActorSystem) {
    system.remote = this;
    system.onShutdown(() => this.shutdown());
  }

  /** This node's `host:port` once started. */
  get address(): string {
    return this.state?.address ?? this.system.registry.address;
  }

  /** Frames and bytes this node's links wrote and received; undefined before start. */
  get traffic(): Readonly<RemoteTraffic> | undefined {
    return this.transport?.traffic;
  }

  /**
   * Whether the peer at `address` reads what this node writes to it (see PeerSilence): the
   * same object while an endpoint to the address exists; undefined before start and for this
   * node's own address. For Granary's packages (the cluster's callers read it per call).
   * @internal
   */
  silenceOf(address: string): PeerSilence | undefined {
    const transport = this.transport;
    if (transport === undefined || address === transport.address) return undefined;
    return transport.silenceOf(address);
  }

  /** Endpoints (peers this node dials) it keeps now; 0 before start. */
  get endpointCount(): number {
    return this.transport?.endpointCount ?? 0;
  }

  /**
   * Counters of wire events: corrupt frames, refused handshakes and connections, exceeded
   * limits, peers not reading, forbidden messages, unreachable and removed endpoints. Each is
   * also logged, one line per kind per `logIntervalMs` with the count.
   */
  get stats(): RemoteStats {
    return this.transport ? this.transport.stats : zeroStats();
  }

  /**
   * The addresses of the cluster's current members (Cluster keeps this up to date). A reply
   * to a sender at another address goes back over the link its request came on instead of
   * dialling it. Without it (plain remoting), senders named by authenticated peers may be
   * dialled when this node authenticates peers (secret or mutual TLS), and never otherwise.
   */
  setMembers(addresses: Iterable<string> | undefined): void {
    this.members = addresses === undefined ? undefined : new Set(addresses);
  }

  /**
   * Binds the gRPC server, sets the system's address to the advertised `host:port`, and routes
   * PIDs of other addresses to their nodes. Resolves with the address.
   * @throws InvalidOptionError on an out-of-range option (the message names it);
   *   InsecureRemoteError when `host` is not loopback and neither `secret` nor mutual `tls`
   *   (nor `insecure: true`) is set.
   */
  async start(options: RemoteOptions = {}): Promise<string> {
    if (this.starting) throw new InvalidOptionError('remote', 'remote is already started');
    this.starting = true;
    try {
      return await this.doStart(options);
    } catch (err) {
      this.starting = false;
      throw err;
    }
  }

  private async doStart(options: RemoteOptions): Promise<string> {
    const o = resolveRemoteOptions(options);
    const logger = this.system.logger.child({ component: 'remote' });
    if (o.listen) checkSecureBinding(o, logger);
    const registry = o.serialization ?? processWideSerialization;
    registerWireTypes(registry);
    const transport = new EndpointManager(
      o,
      {
        batch: (batch, link, receivedAt) =>
          deliverBatch(this.state!, batch, link.peerAddress, receivedAt, transport.routeOf(link)),
        reject: (address, env, error) => this.rejected(address, env, error),
        up: (address) => this.system.eventStream.publish(new EndpointConnectedEvent(address)),
        down: (address, error) => this.endpointDown(address, error),
        // PIDs that cached the endpoint's process resolve again on their next send.
        removed: (endpoint) => {
          if (endpoint.process !== undefined) (endpoint.process as RemoteProcess).dead = true;
        },
        abandoned: (env) => this.abandoned(env),
        expired: () => void this.system.expired.beforeSend++,
      },
      logger,
      this.system.clock,
    );
    const address = await transport.start();
    this.transport = transport;
    this.authenticatesPeers = authenticates(o.secret, o.tls);
    this.state = this.createState(
      address,
      registry,
      o.maxMessageBytes,
      o.limits,
      logger,
      transport.events,
    );
    this.system.address = address;
    this.system.registry.addAddressResolver((pid) => this.processFor(pid));
    this.system.registry.add(
      ACTIVATOR_ID,
      new RemoteActivator(this.system.registry, this.system.root, this.kinds),
    );
    logger.info({ address, clusterName: o.clusterName }, 'remote started');
    return address;
  }

  /** Makes `kind` spawnable on this node by `remote.spawnNamed(thisAddress, kind, name)`. */
  registerKind(kind: string, props: Props): void {
    this.kinds.set(kind, props);
  }

  /**
   * Spawns an actor of a kind registered on the node at `address` and resolves with its PID.
   * @throws UnknownKindError when that node has no such kind; NameExistsError for a taken name.
   */
  async spawnNamed(
    address: string,
    kind: string,
    name: string,
    options: RemoteSpawnOptions = {},
  ): Promise<PID> {
    const target = new PID(address, ACTIVATOR_ID);
    const response = await this.system.root.request<{ pid: { address: string; id: string } }>(
      target,
      WireTypes.SpawnRequest.create({ kind, name }),
      { timeoutMs: options.timeoutMs ?? 5000 },
    );
    return new PID(response.pid.address, response.pid.id);
  }

  /** Like spawnNamed with an id the target node picks. */
  spawn(address: string, kind: string, options?: RemoteSpawnOptions): Promise<PID> {
    return this.spawnNamed(address, kind, '', options);
  }

  /**
   * Flushes queued batches, says goodbye to every peer (their watchers of our actors see
   * `address-terminated`), closes the streams and the server. Requests still waiting on other
   * nodes reject with EndpointUnavailableError.
   */
  async shutdown(): Promise<void> {
    if (this.stopped || !this.transport) return;
    this.stopped = true;
    await this.transport.shutdown();
    const state = this.state!;
    this.failRequests(
      (address) => address !== state.address && address !== NONHOST,
      (address) => new EndpointUnavailableError(address, `remote of ${state.address} is shut down`),
    );
    this.system.registry.remove(new PID(state.address, ACTIVATOR_ID));
  }

  private createState(
    address: string,
    serialization: SerializationRegistry,
    maxMessageBytes: number,
    limits: EnvelopeLimits,
    logger: Logger,
    events: EventLog,
  ): RemoteState {
    const registry = this.system.registry;
    return {
      registry,
      deadLetters: this.system.deadLetters,
      eventStream: this.system.eventStream,
      logger,
      serialization,
      maxMessageBytes,
      limits,
      watches: new WatchTable(),
      address,
      events,
      clock: this.system.clock,
      expired: this.system.expired,
    };
  }

  /**
   * The process that reaches `pid` on another node. A sender that came over a link (`_via`)
   * is reached through an endpoint only if one is live or this node may dial its address;
   * otherwise back over its link.
   */
  private processFor(pid: PID): Process | undefined {
    const transport = this.transport;
    const state = this.state;
    if (!transport || !state) return undefined;
    const address = pid.address;
    const route = pid._via as LinkRoute | undefined;
    if (route !== undefined) {
      const live = transport.liveEndpoint(address);
      if (live) return this.processOf(live);
      if (!this.mayDial(address)) {
        return (route.process ??= new RemoteProcess(state, route)) as RemoteProcess;
      }
    }
    const endpoint = transport.endpoint(address);
    if (!endpoint) return new RefusingProcess(this, noRoomFor(address, transport.maxEndpoints));
    const process = this.processOf(endpoint);
    // Reached by its address alone: later sends to this PID object skip the resolvers.
    if (route === undefined) this.system.registry.cacheRoute(pid, process);
    return process;
  }

  private processOf(endpoint: Endpoint): RemoteProcess {
    const owner = this.system.registry.remoteOwner;
    return (endpoint.process ??= new RemoteProcess(this.state!, endpoint, owner)) as RemoteProcess;
  }

  /** A request from this node whose future is gone (it timed out, or was aborted). */
  private abandoned(env: OutboundEnvelope): boolean {
    const sender = env.sender;
    if (sender === undefined || !sender.id.startsWith(FUTURE_PREFIX)) return false;
    if (sender.address !== this.address) return false;
    return this.system.registry.getLocal(sender.id) === undefined;
  }

  /** Whether a sender address a peer named may be dialled (see setMembers). */
  private mayDial(address: string): boolean {
    return this.members !== undefined ? this.members.has(address) : this.authenticatesPeers;
  }

  /** An envelope its endpoint could not send: watchers learn the node is gone, the rest dead-letters. */
  rejected(address: string, env: OutboundEnvelope, error: Error): void {
    const state = this.state!;
    const target = new PID(address, env.targetId);
    if (env.message instanceof Watch) {
      state.watches.remove(target, env.message.watcher);
      const watcher = env.message.watcher;
      state.registry
        .get(watcher)
        .sendSystemMessage(watcher, new Terminated(target, 'address-terminated'));
      return;
    }
    if (env.format === SYSTEM_FORMAT) return; // other system messages to a gone node have nothing left to do
    state.deadLetters.publish(target, env.message, env.sender, reasonOf(error), error);
  }

  private endpointDown(address: string, error: Error): void {
    const state = this.state!;
    for (const [id, watcher] of state.watches.drain(address)) {
      state.registry
        .get(watcher)
        .sendSystemMessage(watcher, new Terminated(new PID(address, id), 'address-terminated'));
    }
    // Requests never sent were rejected before this (not in flight); these were written to the
    // link that broke, so they may have been delivered: callers must not assume otherwise.
    const peerLeft = error instanceof EndpointUnavailableError && error.peerLeft;
    this.failRequests(
      (target) => target === address,
      () =>
        new EndpointUnavailableError(address, error.message, {
          cause: error,
          inFlight: true,
          peerLeft,
        }),
    );
    state.eventStream.publish(new EndpointTerminatedEvent(address, error));
  }

  /**
   * Rejects the pending requests whose target lives at a matching address. A scan of the
   * registry on the rare endpoint failure, so a request costs no bookkeeping on the hot path.
   */
  private failRequests(
    matches: (address: string) => boolean,
    error: (address: string) => Error,
  ): void {
    for (const p of [...this.system.registry.localProcesses()]) {
      if (p instanceof FutureProcess && matches(p.target.address)) p.fail(error(p.target.address));
    }
  }
}

/**
 * The process of an address no endpoint can be made for (maxEndpoints in use): a request
 * fails at once with the error, a send is dead-lettered with it.
 */
class RefusingProcess implements Process {
  constructor(
    private readonly remote: Remote,
    private readonly error: Error,
  ) {}

  post(pid: PID, entry: Entry): boolean {
    this.remote.system.deadLetters.publish(
      pid,
      entryMessage(entry),
      entrySender(entry),
      reasonOf(this.error),
      this.error,
    );
    return true;
  }

  sendSystemMessage(): void {}

  stop(): void {}
}
