import type { Context } from '@granary/core';
import { context as otelContext } from '@opentelemetry/api';
import { startDeactivationSpan, traceFields, type SpanScope } from '../../telemetry/grain-spans';
import { failSpan } from '../../telemetry/telemetry';
import type { HostedActivation } from '../activation-host';
import type { DeactivationReason } from '../grain';
import { isPromise } from './thenable';

// An activation's end (its `Deactivate` message): onDeactivate after the reentrant turns still
// awaiting, the declared state saved if it persists on deactivation, the actor stopped.

/**
 * Runs onDeactivate (after reentrant turns still awaiting), then saves the kind's state if it
 * persists on deactivation; synchronous when there is nothing to wait for.
 */
export function deactivate(
  a: HostedActivation,
  ctx: Context,
  reason: DeactivationReason,
): void | Promise<void> {
  const r = a.rare;
  if (r !== undefined && r.running > 0) {
    return new Promise<void>((resolve) => (r.quiet = resolve)).then(() =>
      deactivate(a, ctx, reason),
    );
  }
  const state = r?.failure === undefined ? r?.state : undefined;
  const save = state !== undefined && a.host.def.state?.persistOnDeactivate === true;
  const telemetry = a.host.services.telemetry;
  const scope = telemetry.tracing ? startDeactivationSpan(telemetry, a, reason) : undefined;
  const pending = runOnDeactivate(a, reason, scope);
  if (!save && pending === undefined) return end(a, ctx, reason, scope);
  return (async () => {
    await pending;
    if (save) {
      await state.saveIfChanged().catch((err) => deactivateFailed(a, err, reason, scope));
    }
    end(a, ctx, reason, scope);
  })();
}

/** The grain's onDeactivate (failures logged): a promise only when it is asynchronous. */
function runOnDeactivate(
  a: HostedActivation,
  reason: DeactivationReason,
  scope: SpanScope | undefined,
): Promise<void> | undefined {
  const grain = a.grain;
  if (a.rare?.failure !== undefined || grain?.onDeactivate === undefined) return undefined;
  let pending: unknown;
  try {
    pending =
      scope === undefined
        ? grain.onDeactivate(reason)
        : otelContext.with(scope.context, grain.onDeactivate, grain, reason);
  } catch (err) {
    deactivateFailed(a, err, reason, scope);
  }
  if (!isPromise(pending)) return undefined;
  return pending.then(
    () => undefined,
    (err: unknown) => deactivateFailed(a, err, reason, scope),
  );
}

function deactivateFailed(
  a: HostedActivation,
  err: unknown,
  reason: DeactivationReason,
  scope: SpanScope | undefined,
): void {
  if (scope !== undefined) failSpan(scope.span, err);
  a.host.services.logger.error(
    { err, grain: `${a.host.def.name}/${a.identity}`, reason, ...traceFields(scope?.span) },
    'onDeactivate failed',
  );
}

function end(
  a: HostedActivation,
  ctx: Context,
  reason: DeactivationReason,
  scope: SpanScope | undefined,
): void {
  a.rare?.timers?.cancelAll();
  scope?.span.end();
  a.host.ended(a, reason);
  ctx.stop(ctx.self);
}
