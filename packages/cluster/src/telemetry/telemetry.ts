import {
  ProxyTracerProvider,
  SpanStatusCode,
  createNoopMeter,
  metrics,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type MeterProvider,
  type Span,
  type SpanKind,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { VERSION } from '../version';
import { ATTR_ERROR_TYPE, ATTR_NODE_ID } from './attributes';

/** Instrumentation scope of every span and instrument of the cluster. */
export const INSTRUMENTATION_SCOPE = '@granary/cluster';

/** Where a member's spans and metrics go (ClusterOptions.telemetry). */
export interface TelemetryOptions {
  /**
   * Where spans go.
   * @default the global tracer provider of `@opentelemetry/api` (an SDK registers it)
   */
  tracerProvider?: TracerProvider | undefined;
  /**
   * Where metrics go. The meter is taken at `Cluster.start`: register the SDK before.
   * @default the global meter provider of `@opentelemetry/api`
   */
  meterProvider?: MeterProvider | undefined;
}

/** The tracer provider the API hands out while no SDK is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * One member's tracer and meter, through `@opentelemetry/api` only (no SDK in the package).
 * With no SDK registered, `tracing` is false and `meter` undefined: the call path then does no
 * telemetry work at all, not even the API's no-op calls (one property read per call).
 */
export class ClusterTelemetry {
  /** No spans, no metrics: for parts built without a cluster (tests of one component). */
  static readonly DISABLED = new ClusterTelemetry('', {
    tracerProvider: NOOP_TRACER_PROVIDER,
    meterProvider: { getMeter: () => createNoopMeter() },
  });

  readonly tracer: Tracer;
  /** The member's meter, undefined when no meter provider is registered. */
  readonly meter: Meter | undefined;
  /** The global provider while it may still get its SDK (the API's proxy). */
  private readonly proxy: ProxyTracerProvider | undefined;
  private readonly fixedTracing: boolean;

  constructor(
    /** This member's id (`granary.node.id` on every span). */
    readonly node: string,
    options: TelemetryOptions = {},
  ) {
    const tp = options.tracerProvider ?? trace.getTracerProvider();
    this.tracer = tp.getTracer(INSTRUMENTATION_SCOPE, VERSION);
    this.proxy = tp instanceof ProxyTracerProvider ? tp : undefined;
    this.fixedTracing = this.proxy === undefined && tp !== NOOP_TRACER_PROVIDER;
    const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(
      INSTRUMENTATION_SCOPE,
      VERSION,
    );
    this.meter = meter === createNoopMeter() ? undefined : meter;
  }

  /** True while spans may be recorded: a provider other than the API's no-op is in place. */
  get tracing(): boolean {
    const proxy = this.proxy;
    return proxy === undefined ? this.fixedTracing : proxy.getDelegate() !== NOOP_TRACER_PROVIDER;
  }

  /** Starts a span with `granary.node.id` set, under `parent`. */
  startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context): Span {
    attributes[ATTR_NODE_ID] = this.node;
    return this.tracer.startSpan(name, { kind, attributes }, parent);
  }
}

/** `error.type` of an error: its code (`ERR_...`), else its name, else `_OTHER`. */
export function errorTypeOf(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  }
  return '_OTHER';
}

/** Ends `span`; with `error`, marks it failed (status ERROR, `error.type`, the exception). */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) failSpan(span, error);
  span.end();
}

/** Marks `span` failed with `error` without ending it. */
export function failSpan(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(error));
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  if (error instanceof Error) span.recordException(error);
}

/**
 * Runs `op` inside a span (INTERNAL) when tracing is on, ending it with the outcome; without
 * tracing, just `op()`. For the rare operations (activation, deactivation, state load and
 * write, shard claim and release): their cost is the span, never the check.
 */
export async function inSpan<T>(
  telemetry: ClusterTelemetry,
  name: string,
  attributes: Attributes,
  parent: Context,
  op: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!telemetry.tracing) return op(undefined);
  const span = telemetry.startSpan(name, 0 /* INTERNAL */, attributes, parent);
  try {
    const result = await op(span);
    span.end();
    return result;
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
}
