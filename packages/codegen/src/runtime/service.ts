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

/** Builds the dispatch table of a generated grain base class. */
export function defineService<G, Ctx>(
  kindName: string,
  methods: readonly MethodDefinition<G, Ctx>[],
): ServiceDefinition<G, Ctx> {
  return { kindName, methods: new Map(methods.map((m) => [m.path, m])) };
}
