import type { Type } from 'protobufjs';
import type { GrainCallOptions } from '@granary/cluster';
import type { ClusterLike, InvokeContext } from '../../src/runtime';
import { typeNameOf } from '../../src/runtime';

/** Where the in-memory cluster finds a message's protobuf type (core's registry has `lookup`). */
export interface TypeLookup {
  lookup(typeName: string): Type | undefined;
}

/** Records registered protobuf types by full name, like @granary/core's registry. */
export class RecordingRegistry implements TypeLookup {
  readonly types = new Map<string, Type>();
  registerType(type: Type): void {
    this.types.set(type.fullName.replace(/^\./, ''), type);
  }
  lookup(typeName: string): Type | undefined {
    return this.types.get(typeName);
  }
}

/** A grain as the in-memory cluster drives it (the contract's `Grain`, structurally). */
export interface TestGrain {
  receive(ctx: InvokeContext): unknown;
}

/** What `cluster.request` rejects with when grain code throws, shaped like cluster's GrainError. */
export class FakeGrainError extends Error {
  override readonly name = 'GrainError';
  readonly code = 'ERR_GRAIN';
  constructor(
    readonly originalCode: string | undefined,
    readonly originalName: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * NOT a cluster: a unit-test double that satisfies `ClusterLike` in one process. Each
 * request and reply goes through protobuf encode/decode with the registered types (as between
 * nodes), grain errors come back as `FakeGrainError`, and the options of every request are
 * recorded (a generated client passes them through).
 */
export class InMemoryCluster implements ClusterLike {
  readonly grains = new Map<string, TestGrain>();
  readonly requests: {
    kind: string;
    identity: string;
    message: unknown;
    options: GrainCallOptions | undefined;
  }[] = [];
  readonly sent: unknown[] = [];

  constructor(
    private readonly registry: TypeLookup,
    private readonly factories: Record<string, () => TestGrain>,
  ) {}

  async request<T = unknown>(
    kind: string,
    identity: string,
    message: unknown,
    options?: GrainCallOptions,
  ): Promise<T> {
    this.requests.push({ kind, identity, message, options });
    const grain = this.grainOf(kind, identity);
    let reply: unknown;
    const ctx: InvokeContext = {
      message: this.roundTrip(message),
      respond: (m) => {
        reply = this.roundTrip(m);
      },
    };
    try {
      await grain.receive(ctx);
    } catch (err) {
      const e = err as { code?: string; name: string; message: string };
      throw new FakeGrainError(e.code, e.name, e.message);
    }
    return reply as T;
  }

  send(kind: string, identity: string, message: unknown): void {
    this.sent.push(message);
    void this.grainOf(kind, identity).receive({
      message: this.roundTrip(message),
      respond: () => {},
    });
  }

  private grainOf(kind: string, identity: string): TestGrain {
    const key = `${kind}/${identity}`;
    let grain = this.grains.get(key);
    if (grain === undefined) {
      const factory = this.factories[kind];
      if (factory === undefined) throw new Error(`unknown kind ${kind}`);
      grain = factory();
      this.grains.set(key, grain);
    }
    return grain;
  }

  /** Encodes with the registered type and decodes, as the remote transport does. */
  private roundTrip(message: unknown): unknown {
    const typeName = typeNameOf(message);
    const type = typeName === undefined ? undefined : this.registry.lookup(typeName);
    if (type === undefined) return message;
    return type.decode(type.encode(message as object).finish());
  }
}
