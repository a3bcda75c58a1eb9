import {
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  TraceFlags,
  context,
  createTraceState,
  propagation,
  trace,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import { expect } from 'chai';
import {
  BAGGAGE_HEADER,
  Props,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  incomingTraceContext,
  injectSpanContext,
  injectTraceContext,
  parseTraceparent,
  traceContextOf,
  withActiveTraceContext,
  withTraceIds,
  type Logger,
} from '../src/index';
import { testSystem } from './support';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

/** A synchronous context manager (a stack): enough for code that does not await. */
class StackContextManager implements ContextManager {
  private readonly stack: Context[] = [];
  active(): Context {
    return this.stack[this.stack.length - 1] ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

function spanContext(sampled = true): Context {
  const span = trace.wrapSpanContext({
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    traceState: createTraceState('vendor=a1,other=b2'),
  });
  return trace.setSpan(ROOT_CONTEXT, span);
}

describe('trace context in headers (W3C)', () => {
  describe('injectTraceContext', () => {
    it('writes traceparent and tracestate of the span context', () => {
      const header: Record<string, string> = {};
      expect(injectTraceContext(spanContext(), header)).to.equal(true);
      expect(header[TRACEPARENT_HEADER]).to.equal(`00-${TRACE_ID}-${SPAN_ID}-01`);
      expect(header[TRACESTATE_HEADER]).to.equal('vendor=a1,other=b2');
      const unsampled: Record<string, string> = {};
      injectTraceContext(spanContext(false), unsampled);
      expect(unsampled[TRACEPARENT_HEADER]).to.equal(`00-${TRACE_ID}-${SPAN_ID}-00`);
    });

    it('writes baggage percent-encoded, and nothing for an empty context', () => {
      const ctx = propagation.setBaggage(
        ROOT_CONTEXT,
        propagation.createBaggage({ user: { value: 'a b,c' }, tenant: { value: 't1' } }),
      );
      const header: Record<string, string> = {};
      expect(injectTraceContext(ctx, header)).to.equal(true);
      expect(header[BAGGAGE_HEADER]).to.equal('user=a%20b%2Cc,tenant=t1');
      expect(header).to.not.have.property(TRACEPARENT_HEADER);
      const none: Record<string, string> = {};
      expect(injectTraceContext(ROOT_CONTEXT, none)).to.equal(false);
      expect(none).to.deep.equal({});
    });
  });

  describe('injectSpanContext', () => {
    it('writes what injectTraceContext writes for the context holding the span', () => {
      const ctx = propagation.setBaggage(
        spanContext(),
        propagation.createBaggage({ user: { value: 'a b,c' } }),
      );
      const viaContext: Record<string, string> = {};
      injectTraceContext(ctx, viaContext);
      const direct: Record<string, string> = { keep: '1' };
      expect(injectSpanContext(trace.getSpanContext(ctx)!, ctx, direct)).to.equal(true);
      expect(direct).to.deep.equal({ keep: '1', ...viaContext });
      expect(Object.keys(viaContext).sort()).to.deep.equal([
        BAGGAGE_HEADER,
        TRACEPARENT_HEADER,
        TRACESTATE_HEADER,
      ]);
    });

    it('skips the invalid context of a suppressed span (baggage still travels)', () => {
      const none: Record<string, string> = {};
      expect(injectSpanContext(INVALID_SPAN_CONTEXT, ROOT_CONTEXT, none)).to.equal(false);
      expect(none).to.deep.equal({});
      const ctx = propagation.setBaggage(
        ROOT_CONTEXT,
        propagation.createBaggage({ tenant: { value: 't1' } }),
      );
      const header: Record<string, string> = {};
      expect(injectSpanContext(INVALID_SPAN_CONTEXT, ctx, header)).to.equal(true);
      expect(header).to.deep.equal({ [BAGGAGE_HEADER]: 'tenant=t1' });
    });
  });

  describe('incomingTraceContext', () => {
    it('is the context the header carries, undefined when it carries none or garbage', () => {
      const ctx = incomingTraceContext({
        [TRACEPARENT_HEADER]: `00-${TRACE_ID}-${SPAN_ID}-01`,
        [BAGGAGE_HEADER]: 'tenant=t1',
      });
      expect(trace.getSpanContext(ctx!)).to.include({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        isRemote: true,
      });
      expect(propagation.getBaggage(ctx!)?.getEntry('tenant')?.value).to.equal('t1');
      expect(incomingTraceContext({})).to.equal(undefined);
      expect(incomingTraceContext({ [TRACEPARENT_HEADER]: 'garbage' })).to.equal(undefined);
    });
  });

  describe('traceContextOf', () => {
    it('reads back what inject wrote: span context (remote) and baggage', () => {
      const header: Record<string, string> = {};
      const ctx = propagation.setBaggage(
        spanContext(),
        propagation.createBaggage({ user: { value: 'a b,c' } }),
      );
      injectTraceContext(ctx, header);
      const read = traceContextOf(header);
      const sc = trace.getSpanContext(read)!;
      expect(sc).to.include({ traceId: TRACE_ID, spanId: SPAN_ID, isRemote: true });
      expect(sc.traceFlags).to.equal(TraceFlags.SAMPLED);
      expect(sc.traceState?.get('vendor')).to.equal('a1');
      expect(propagation.getBaggage(read)?.getEntry('user')?.value).to.equal('a b,c');
    });

    it('ignores malformed values and keeps the base context', () => {
      expect(parseTraceparent('00-abc-def-01')).to.equal(undefined);
      expect(parseTraceparent(`ff-${TRACE_ID}-${SPAN_ID}-01`)).to.equal(undefined);
      expect(parseTraceparent(`00-${'0'.repeat(32)}-${SPAN_ID}-01`)).to.equal(undefined);
      expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01-extra`)).to.equal(undefined);
      expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01-future`)).to.not.equal(undefined);
      expect(parseTraceparent(`00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`)).to.equal(undefined);
      expect(parseTraceparent(`00-${TRACE_ID}-${'0'.repeat(16)}-01`)).to.equal(undefined);
      expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-0g`)).to.equal(undefined);
      expect(parseTraceparent(`00_${TRACE_ID}-${SPAN_ID}-01`)).to.equal(undefined);
      expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01x`)).to.equal(undefined);
      expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-0`)).to.equal(undefined);
      expect(traceContextOf({ [TRACEPARENT_HEADER]: 'garbage' })).to.equal(ROOT_CONTEXT);
      expect(traceContextOf(undefined)).to.equal(ROOT_CONTEXT);
      const baggage = traceContextOf({ [BAGGAGE_HEADER]: 'bad=%E0%A4%A,good=1' });
      expect(
        propagation
          .getBaggage(baggage)
          ?.getAllEntries()
          .map(([k]) => k),
      ).to.deep.equal(['good']);
    });

    it('reads the ids and the sampled flag of well-formed values, surrounding blanks trimmed', () => {
      expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`)).to.deep.equal({
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        traceFlags: 1,
        isRemote: true,
      });
      expect(parseTraceparent(` 00-${TRACE_ID}-${SPAN_ID}-00 `)?.traceFlags).to.equal(0);
      // Flags other than sampled are not kept (W3C: unknown flags are not propagated).
      expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-ff`)?.traceFlags).to.equal(1);
      expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-02`)?.traceFlags).to.equal(0);
      expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01`)?.spanId).to.equal(SPAN_ID);
      expect(
        parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`, 'k=v')?.traceState?.get('k'),
      ).to.equal('v');
    });
  });

  describe('with a context manager', () => {
    before(() => context.setGlobalContextManager(new StackContextManager()));
    after(() => context.disable());

    it('withActiveTraceContext adds the active context, keeps a header that has one', () => {
      expect(withActiveTraceContext(undefined)).to.equal(undefined);
      const own = { [TRACEPARENT_HEADER]: 'mine' };
      context.with(spanContext(), () => {
        expect(withActiveTraceContext({ a: '1' })).to.deep.include({
          a: '1',
          [TRACEPARENT_HEADER]: `00-${TRACE_ID}-${SPAN_ID}-01`,
        });
        expect(withActiveTraceContext(own)).to.equal(own);
      });
    });

    it('an actor request made inside a span carries its traceparent to the target', async () => {
      const system = testSystem();
      const pid = system.root.spawn(
        Props.fromFunc((ctx) => {
          if (ctx.sender !== undefined) ctx.respond(ctx.headers[TRACEPARENT_HEADER] ?? 'none');
        }),
      );
      const outside = await system.root.request(pid, 'x', { timeoutMs: 1000 });
      const inside = await context.with(spanContext(), () =>
        system.root.request(pid, 'x', { timeoutMs: 1000 }),
      );
      expect(outside).to.equal('none');
      expect(inside).to.equal(`00-${TRACE_ID}-${SPAN_ID}-01`);
      await system.shutdown();
    });

    it('incomingTraceContext leaves a call to the active span (an instrumentation made one)', () => {
      const header = { [TRACEPARENT_HEADER]: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` };
      context.with(spanContext(), () => {
        expect(incomingTraceContext(header)).to.equal(undefined);
      });
      expect(trace.getSpanContext(incomingTraceContext(header)!)?.traceId).to.equal('1'.repeat(32));
    });

    it('withTraceIds adds trace_id and span_id to lines written inside a span', () => {
      const lines: Array<[unknown, unknown]> = [];
      const base: Logger = {
        debug: () => undefined,
        info: () => undefined,
        warn: (o, m) => lines.push([o, m]),
        error: () => undefined,
        child: () => base,
      };
      const logger = withTraceIds(base).child({ component: 'x' });
      logger.warn({ a: 1 }, 'outside');
      context.with(spanContext(), () => {
        logger.warn({ a: 2 }, 'inside');
        logger.warn('text only');
      });
      expect(lines).to.deep.equal([
        [{ a: 1 }, 'outside'],
        [{ a: 2, trace_id: TRACE_ID, span_id: SPAN_ID }, 'inside'],
        [{ trace_id: TRACE_ID, span_id: SPAN_ID }, 'text only'],
      ]);
    });
  });
});
