import type { MessageCodec, MessageInit } from './message-codec';

/** One rpc of a service as the grain base class dispatches it. */
export interface MethodDefinition<G, Ctx> {
  /** `package.Service/Method`: the identity on the wire. */
  readonly path: string;
  readonly request: MessageCodec<unknown>;
  readonly response: MessageCodec<unknown>;
  /** Calls the grain's implementation (`(g, req, ctx) => g.ping(req, ctx)`). */
  readonly handler: (grain: G, request: never, ctx: Ctx) => unknown;
}

/** A service: its kind name and its rpcs by method identity. */
export interface ServiceDefinition<G, Ctx> {
  /** The kind grains of this service are registered under: the service's full name. */
  readonly kindName: string;
  readonly methods: ReadonlyMap<string, MethodDefinition<G, Ctx>>;
}

/** Describes one rpc for `defineService`; request and response types are checked here. */
export function method<G, Ctx, Req, Res>(
  path: string,
  request: MessageCodec<Req>,
  response: MessageCodec<Res>,
  handler: (grain: G, request: Req, ctx: Ctx) => Promise<MessageInit<Res>> | MessageInit<Res>,
): MethodDefinition<G, Ctx> {
  return {
    path,
    request: request as MessageCodec<unknown>,
    response: response as MessageCodec<unknown>,
    handler: handler as (grain: G, request: never, ctx: Ctx) => unknown,
  };
}

/**
 * Every service a generated module loaded in this process defined, by kind name: what a gRPC
 * gateway serves (`GrpcGateway.start`). Keyed by a registered symbol on globalThis, so two
 * installed copies of the runtime share it.
 */
const REGISTRY_KEY = Symbol.for('granary.codegen.services');
const registry: Map<string, ServiceDefinition<unknown, unknown>> = ((
  globalThis as { [REGISTRY_KEY]?: Map<string, ServiceDefinition<unknown, unknown>> }
)[REGISTRY_KEY] ??= new Map());

/** The services generated modules loaded in this process define, by kind name. */
export function definedServices(): ReadonlyMap<string, ServiceDefinition<unknown, unknown>> {
  return registry;
}

/** Builds the dispatch table of a generated grain base class (and registers the service). */
export function defineService<G, Ctx>(
  kindName: string,
  methods: readonly MethodDefinition<G, Ctx>[],
): ServiceDefinition<G, Ctx> {
  const service = { kindName, methods: new Map(methods.map((m) => [m.path, m])) };
  registry.set(kindName, service as ServiceDefinition<unknown, unknown>);
  return service;
}
