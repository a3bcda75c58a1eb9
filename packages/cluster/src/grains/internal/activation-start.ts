import type { Context } from '@granary/core';
import { context as otelContext } from '@opentelemetry/api';
import { PersistentState } from '../../state/persistent-state';
import { startActivationSpan, traceFields, type SpanScope } from '../../telemetry/grain-spans';
import { endSpan } from '../../telemetry/telemetry';
import { Rare, activationDeadline, type HostedActivation } from '../activation-host';
import type { Grain } from '../grain';
import { GrainTurnContext } from '../grain-context';
import { callerErrorOf } from './caller-error';
import { ActivationState, GRAIN_STATE, runtimeStateError } from '../grain-state';
import { isPromise } from './thenable';
import { fencedEpoch } from './write-fence';

// An activation's start (its `Started` message): the grain made, its declared state loaded,
// onActivate run, and a failure of any of them kept to answer every message until it ends.

/**
 * Loads the kind's state if it declares one, then runs onActivate; synchronous (no awaited
 * turn) unless either is asynchronous.
 */
export function activate(a: HostedActivation, ctx: Context): void | Promise<void> {
  const host = a.host;
  host.activated(a);
  const services = host.services;
  const telemetry = services.telemetry;
  const scope = telemetry.tracing
    ? startActivationSpan(telemetry, a, a.rare?.traceParent)
    : undefined;
  const clock = services.system.clock;
  const t0 = services.timed ? clock.monotonic() : undefined;
  const firstDeadline = a.firstDeadline;
  // Only the first turn needs it: an idle grain keeps no boxed number.
  a.firstDeadline = undefined;
  let grain: Grain;
  try {
    grain = a.grain = host.def.factory();
  } catch (err) {
    return activationEnded(a, t0, scope, err, true);
  }
  // Most grains declare neither state nor onActivate: no closure, no deadline per activation.
  if (host.def.state === undefined && grain.onActivate === undefined) {
    return activationEnded(a, t0, scope, undefined, false);
  }
  const deadline = activationDeadline(services, firstDeadline ?? Infinity);
  const done = (err: unknown): void => activationEnded(a, t0, scope, err, false);
  const failed = (err: unknown): void => activationEnded(a, t0, scope, err, true);
  if (host.def.state !== undefined) {
    // The state read is a child of the activation's span.
    const load =
      scope === undefined
        ? loadState(a, grain, deadline)
        : otelContext.with(scope.context, () => loadState(a, grain, deadline));
    return load.then(
      () => runOnActivate(a, ctx, grain, deadline, scope, done, failed),
      (err: unknown) => failed(runtimeStateError(err)),
    );
  }
  return runOnActivate(a, ctx, grain, deadline, scope, done, failed);
}

/** Activation over: `failed` when the factory, the state load or onActivate threw. */
function activationEnded(
  a: HostedActivation,
  t0: number | undefined,
  scope: SpanScope | undefined,
  err: unknown,
  failed: boolean,
): void {
  if (failed) activationFailed(a, err, scope);
  const clock = a.host.services.system.clock;
  a.host.activationDone(a, t0 === undefined ? undefined : clock.monotonic() - t0, err);
  if (scope !== undefined) endSpan(scope.span, err);
}

function runOnActivate(
  a: HostedActivation,
  ctx: Context,
  grain: Grain,
  deadline: number,
  scope: SpanScope | undefined,
  done: (err: unknown) => void,
  failed: (err: unknown) => void,
): void | Promise<void> {
  if (grain.onActivate === undefined) return done(undefined);
  let pending: unknown;
  try {
    const gctx = new GrainTurnContext(a, ctx, undefined, undefined, true, deadline);
    if (scope === undefined) pending = grain.onActivate(gctx);
    else {
      gctx.traced(scope.context, undefined);
      pending = otelContext.with(scope.context, grain.onActivate, grain, gctx);
    }
  } catch (err) {
    return failed(err);
  }
  if (!isPromise(pending)) return done(undefined);
  return pending.then(() => done(undefined), failed);
}

/**
 * Loads the state the kind declares, under the shard epoch of the activation (captured now:
 * a drain must still be able to save under it; no write once the member is fenced), and hands
 * the grain its handle.
 */
async function loadState(a: HostedActivation, grain: Grain, deadline: number): Promise<void> {
  const host = a.host;
  const def = host.def;
  const declared = def.state!;
  const ps = new PersistentState<unknown>({
    store: declared.store,
    kind: def.name,
    id: a.identity,
    codec: declared.codec,
    epoch: fencedEpoch(host.gate, a.shard, def.name, a.identity, host.services.cluster.id),
    initial: declared.initial,
    telemetry: host.services.state,
  });
  await ps.load(deadline);
  const handle = new ActivationState(ps, () => host.requestDeactivate(a, 'state-conflict'));
  (a.rare ??= new Rare()).state = handle;
  Object.defineProperty(grain, GRAIN_STATE, { value: handle, configurable: true });
}

function activationFailed(a: HostedActivation, err: unknown, scope: SpanScope | undefined): void {
  const host = a.host;
  const kind = host.def.name;
  (a.rare ??= new Rare()).failure = callerErrorOf(kind, a.identity, err);
  host.services.logger.warn(
    {
      err,
      grain: `${kind}/${a.identity}`,
      activationId: a.id,
      ...traceFields(scope?.span),
    },
    'grain activation failed',
  );
  host.requestDeactivate(a, 'activation-failed');
}
