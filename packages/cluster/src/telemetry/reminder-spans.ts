import {
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
  context,
  trace,
  type Attributes,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import type { ReminderFire } from '../reminders/reminder';
import {
  ATTR_GRAIN_KEY,
  ATTR_GRAIN_KIND,
  ATTR_NODE_ID,
  ATTR_REMINDER_ATTEMPT,
  ATTR_REMINDER_NAME,
  ATTR_REMINDER_TARDINESS_MS,
  ATTR_REMINDER_TICK,
  ATTR_REMINDER_TYPE,
} from './attributes';
import type { SpanScope } from './grain-spans';
import type { ClusterTelemetry } from './telemetry';

/** Span name of one reminder fire or job attempt. */
export const SPAN_REMINDER_FIRE = 'granary.reminder.fire';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C `traceparent` of the span active now (the one that sets a reminder), stored with the
 * reminder's schedule so each fire can link to it; undefined when there is none.
 */
export function activeTraceparent(): string | undefined {
  const sc = trace.getSpanContext(context.active());
  if (sc === undefined || !trace.isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & TraceFlags.SAMPLED).toString(16)}`;
}

function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const m = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (m === null) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
}

/**
 * The span of one fire: a root span (a fire is caused by the clock, not by a call), linked to
 * the span that set the reminder when its schedule carries one. The grain call that delivers
 * the fire runs in its context, so the call and the grain's turn are its children.
 */
export function startFireSpan(
  telemetry: ClusterTelemetry,
  kind: string,
  id: string,
  fire: ReminderFire,
  schedule: string | undefined,
): SpanScope {
  const attributes: Attributes = {
    [ATTR_GRAIN_KIND]: kind,
    [ATTR_GRAIN_KEY]: id,
    [ATTR_REMINDER_NAME]: fire.$reminder,
    [ATTR_REMINDER_TYPE]: fire.job ? 'job' : 'reminder',
    [ATTR_REMINDER_TICK]: fire.tick,
    [ATTR_REMINDER_ATTEMPT]: fire.attempt,
    [ATTR_REMINDER_TARDINESS_MS]: fire.firedAt - fire.dueAt,
    [ATTR_NODE_ID]: telemetry.node,
  };
  const linked = spanContextOf(schedule);
  const links: Link[] = linked === undefined ? [] : [{ context: linked }];
  const span = telemetry.tracer.startSpan(
    SPAN_REMINDER_FIRE,
    { kind: SpanKind.INTERNAL, attributes, links, root: true },
    ROOT_CONTEXT,
  );
  return { span, context: trace.setSpan(ROOT_CONTEXT, span) };
}
