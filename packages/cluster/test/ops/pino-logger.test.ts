import { Writable } from 'node:stream';
import { expect } from 'chai';
import pino from 'pino';
import { Cluster } from '../../src/cluster';
import type { Grain } from '../../src/grains/grain';
import { kind } from '../../src/grains/kind';
import { MemoryProvider } from '../../src/providers/memory/memory-provider';
import { MemoryClusterTable } from '../../src/providers/memory/memory-table';
import { startTestSdk, type TestSdk } from '../telemetry/fixtures/test-sdk';

class Broken implements Grain {
  onActivate(): void {
    throw Object.assign(new Error('state unreadable'), { code: 'ERR_TEST_LOAD' });
  }
  receive(): unknown {
    return 'never';
  }
}

/** A pino logger writing its JSON lines into `lines`. */
function capturingPino(lines: Array<Record<string, unknown>>): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

describe('a pino logger passed to Cluster.start', function () {
  this.timeout(15_000);
  let sdk: TestSdk;
  let cluster: Cluster;
  const lines: Array<Record<string, unknown>> = [];
  const table = new MemoryClusterTable();

  before(async () => {
    sdk = startTestSdk(true);
    cluster = await Cluster.start({
      name: 'pino',
      id: 'node-p',
      provider: new MemoryProvider(table, { ttlMs: 1000 }),
      kinds: [kind('broken', () => new Broken(), { shardCount: 2 })],
      remote: { host: '127.0.0.1', port: 0 },
      // The pino logger as it is: it satisfies the cluster's Logger.
      logger: capturingPino(lines),
    });
  });

  after(async () => {
    await cluster?.shutdown({ graceful: false });
    await sdk?.shutdown();
  });

  it('receives the activation-failure line with node, component, err and trace ids', async () => {
    await cluster.request('broken', 'b-1', 'hi').catch(() => undefined);
    const line = lines.find((l) => l.msg === 'grain activation failed');
    expect(line, JSON.stringify(lines)).to.not.equal(undefined);
    expect(line).to.include({
      level: 40,
      node: 'node-p',
      component: 'grains',
      grain: 'broken/b-1',
    });
    expect(line!.err).to.include({
      type: 'Error',
      message: 'state unreadable',
      code: 'ERR_TEST_LOAD',
    });
    expect(line!.trace_id).to.match(/^[0-9a-f]{32}$/);
    expect(line!.span_id).to.match(/^[0-9a-f]{16}$/);
    const activation = sdk.spans
      .getFinishedSpans()
      .find((s) => s.name === 'granary.activate' && s.attributes['granary.grain.key'] === 'b-1');
    expect(activation?.spanContext().traceId).to.equal(line!.trace_id);
    expect(activation?.spanContext().spanId).to.equal(line!.span_id);
  });

  it('receives the lease-lost line with node, component and trace ids', async () => {
    const lost = new Promise<void>((resolve) => cluster.on('lease-lost', () => resolve()));
    table.expireMember('node-p');
    await lost;
    const line = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('lease lost'));
    expect(line, JSON.stringify(lines)).to.not.equal(undefined);
    expect(line).to.include({ level: 40, node: 'node-p', component: 'cluster' });
    expect(line!.trace_id).to.match(/^[0-9a-f]{32}$/);
    expect(line!.span_id).to.match(/^[0-9a-f]{16}$/);
    const span = sdk.spans.getFinishedSpans().find((s) => s.name === 'granary.lease.lost');
    expect(span?.spanContext().spanId).to.equal(line!.span_id);
  });

  it('adds trace ids to any line written while a span is active', async () => {
    const { trace } = await import('@opentelemetry/api');
    const before = lines.length;
    await trace.getTracer('t').startActiveSpan('work', async (span) => {
      cluster.system.logger.warn({ step: 1 }, 'inside a span');
      span.end();
    });
    const line = lines.slice(before).find((l) => l.msg === 'inside a span');
    expect(line).to.include({ node: 'node-p', step: 1 });
    expect(line!.trace_id).to.match(/^[0-9a-f]{32}$/);
  });
});
