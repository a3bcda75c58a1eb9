import type { Logger } from '@granary/core';

/** The grain a warning is about. */
interface WarnedGrain {
  kind: string;
  identity: string;
}

/**
 * A request's turn returned undefined and did not respond: the caller only learns of it at its
 * deadline (as DeadlineExceededError), so the first of a kind is logged (Activator.noReply).
 */
export function warnNoReply(logger: Logger, g: WarnedGrain, message: unknown): void {
  logger.warn(
    {
      grain: `${g.kind}/${g.identity}`,
      kind: g.kind,
      identity: g.identity,
      message: describeMessage(message),
    },
    'a grain turn returned undefined to a request and did not call ctx.respond: no reply is sent and the caller waits until its deadline; return a value (null for none) or use cluster.send (logged once per kind)',
  );
}

/**
 * A turn ran past longTurnMs (`running`: it still runs, seen by the watch; else it just ended),
 * logged once per activation (Activator.longTurn).
 */
export function warnLongTurn(
  logger: Logger,
  g: WarnedGrain & { activationId: string; longTurnMs: number | undefined },
  ms: number,
  running: boolean,
): void {
  logger.warn(
    {
      grain: `${g.kind}/${g.identity}`,
      kind: g.kind,
      identity: g.identity,
      activationId: g.activationId,
      durationMs: Math.round(ms),
      running,
      longTurnMs: g.longTurnMs,
    },
    running
      ? 'grain turn running longer than longTurnMs (logged once per activation)'
      : 'grain turn took longer than longTurnMs (logged once per activation)',
  );
}

/** A message's type for a log line (never its content: it may hold a user's data). */
function describeMessage(message: unknown): string {
  if (message === null || typeof message !== 'object') return typeof message;
  return (message as object).constructor?.name ?? 'object';
}
