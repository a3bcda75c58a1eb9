import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { LogFn, Logger, LogLevel } from './logger';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * `logger`, with `trace_id` and `span_id` added to every line written while a span is active
 * (the OpenTelemetry log correlation fields), and the same for each of its children. Lines
 * written outside any span are passed on unchanged. Cluster.start wraps the logger it is given
 * with it, so a pino logger sees the ids without a mixin of its own.
 */
export function withTraceIds(logger: Logger): Logger {
  const wrap =
    (level: LogLevel): LogFn =>
    (objOrMsg, msg) => {
      const sc = trace.getSpanContext(context.active());
      if (sc === undefined || !isSpanContextValid(sc)) {
        if (msg === undefined) logger[level](objOrMsg);
        else logger[level](objOrMsg, msg);
        return;
      }
      const ids = { trace_id: sc.traceId, span_id: sc.spanId };
      if (typeof objOrMsg === 'string') logger[level](ids, objOrMsg);
      else logger[level]({ ...objOrMsg, ...ids }, msg);
    };
  const traced = {
    child: (bindings: Record<string, unknown>) => withTraceIds(logger.child(bindings)),
  } as Logger;
  for (const level of LEVELS) traced[level] = wrap(level);
  return traced;
}
