import { join } from 'node:path';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { expect } from 'chai';
import { silentLogger, TestCluster, waitUntil } from '@granary/testkit';
import { Cluster } from '../../src/cluster';
import { GrainError } from '../../src/errors';
import { EtcdProvider } from '../../src/providers/etcd/etcd-provider';
import { startTestSdk, viewOf, type SpanView, type TestSdk } from './fixtures/test-sdk';

const TRACE_NODE = join(__dirname, 'fixtures/trace-node.js');
/** The kinds each node process hosts: a chain across all three, and slow/fail beside it. */
const NODE_KINDS = [['chain-a', 'slow'], ['chain-b', 'fail'], ['chain-c']];

describe('Tracing across node processes (OpenTelemetry SDK, in-memory exporters)', function () {
  this.timeout(90_000);
  let tc: TestCluster;
  let client: Cluster;
  let sdk: TestSdk;

  before(async () => {
    sdk = startTestSdk(true);
    tc = await TestCluster.start({
      size: 3,
      etcd: true,
      script: TRACE_NODE,
      config: (ctx) => ({
        etcdEndpoints: ctx.etcdEndpoints,
        id: ctx.id,
        cluster: 'trace',
        kinds: NODE_KINDS[ctx.index],
      }),
    });
    client = await Cluster.start({
      name: 'trace',
      id: 'test-client',
      provider: new EtcdProvider({
        endpoints: tc.etcd!.endpoints,
        ttlSeconds: 3,
        prefix: '/granary-trace',
        logger: silentLogger,
      }),
      remote: { host: '127.0.0.1', port: 0 },
      logger: silentLogger,
    });
    await waitUntil(() => client.topology.members.length === 4, 'the client sees 3 nodes', {
      on: [(l) => client.on('topology', l)],
      timeoutMs: 15_000,
    });
  });

  after(async () => {
    await client?.shutdown({ graceful: false });
    await tc?.stop();
    await sdk?.shutdown();
  });

  /** Every finished span: the test process's and each node's (asked over stdin). */
  async function allSpans(): Promise<SpanView[]> {
    const spans = sdk.spans.getFinishedSpans().map((s) => ({ ...viewOf(s), node: 'test' }));
    for (const node of tc.nodes) {
      const p = node.process!;
      const from = p.lines.length;
      p.send({ cmd: 'spans' });
      const line = await p.waitFor((d) => d.type === 'spans', 10_000, from);
      for (const s of line.data.spans as SpanView[]) spans.push({ ...s, node: node.id });
    }
    return spans;
  }

  function one(spans: SpanView[], match: (s: SpanView) => boolean, what: string): SpanView {
    const found = spans.filter(match);
    expect(found, what).to.have.length(1);
    return found[0]!;
  }

  it('a chain A -> B -> C across 3 processes is one trace with correct parent links', async () => {
    const tracer = trace.getTracer('test');
    let rootSpanId = '';
    let traceId = '';
    const path = await tracer.startActiveSpan('test-root', async (root) => {
      rootSpanId = root.spanContext().spanId;
      traceId = root.spanContext().traceId;
      try {
        return await client.request<string[]>('chain-a', 'x', { hop: 1 }, { timeoutMs: 15_000 });
      } finally {
        root.end();
      }
    });
    expect(path).to.deep.equal(['node-0', 'node-1', 'node-2']);
    const spans = (await allSpans()).filter((s) => s.traceId === traceId);
    const is = (node: string, name: string, kind: number) => (s: SpanView) =>
      s.node === node && s.name === name && s.kind === kind;

    const clientA = one(spans, is('test', 'chain-a/object', SpanKind.CLIENT), 'client span A');
    expect(clientA.parentSpanId).to.equal(rootSpanId);
    const serverA = one(spans, is('node-0', 'chain-a/object', SpanKind.SERVER), 'server span A');
    expect(serverA.parentSpanId).to.equal(clientA.spanId);
    const activateA = one(
      spans,
      (s) =>
        is('node-0', 'granary.activate', SpanKind.INTERNAL)(s) &&
        s.attributes['granary.grain.kind'] === 'chain-a',
      'activation span A',
    );
    expect(activateA.parentSpanId).to.equal(clientA.spanId);
    const clientB = one(spans, is('node-0', 'chain-b/object', SpanKind.CLIENT), 'client span B');
    expect(clientB.parentSpanId).to.equal(serverA.spanId);
    const serverB = one(spans, is('node-1', 'chain-b/object', SpanKind.SERVER), 'server span B');
    expect(serverB.parentSpanId).to.equal(clientB.spanId);
    const clientC = one(spans, is('node-1', 'chain-c/object', SpanKind.CLIENT), 'client span C');
    expect(clientC.parentSpanId).to.equal(serverB.spanId);
    const serverC = one(spans, is('node-2', 'chain-c/object', SpanKind.SERVER), 'server span C');
    expect(serverC.parentSpanId).to.equal(clientC.spanId);

    // The attributes of the issue, on the client and the server span.
    expect(clientA.attributes).to.include({
      'rpc.system.name': 'granary',
      'rpc.method': 'object',
      'granary.grain.kind': 'chain-a',
      'granary.grain.key': 'x',
      'granary.node.id': 'test-client',
      'server.address': '127.0.0.1',
    });
    const nodeA = tc.nodes[0]!.process!.lines.find((l) => l.data.type === 'ready')!.data;
    expect(clientA.attributes['server.port']).to.equal(Number(String(nodeA.address).split(':')[1]));
    expect(clientA.attributes['granary.deadline.remaining_ms']).to.equal(15_000);
    for (const [s, node, kind] of [
      [serverA, 'node-0', 'chain-a'],
      [serverB, 'node-1', 'chain-b'],
      [serverC, 'node-2', 'chain-c'],
    ] as const) {
      expect(s.attributes).to.include({
        'rpc.system.name': 'granary',
        'rpc.method': 'object',
        'granary.grain.kind': kind,
        'granary.grain.key': 'x',
        'granary.node.id': node,
      });
      expect(s.attributes['granary.activation.id']).to.be.a('string').and.not.equal('');
      expect(s.attributes['granary.shard.epoch']).to.be.a('number').above(0);
      const remaining = s.attributes['granary.deadline.remaining_ms'] as number;
      expect(remaining).to.be.above(0).and.at.most(15_000);
      expect(s.status.code).to.equal(SpanStatusCode.UNSET);
    }
  });

  it('a retried call shows each retry as an event with its reason', async () => {
    await client.request('slow', 's', 'ping', { timeoutMs: 15_000 });
    sdk.spans.reset();
    // A mailbox of 1 and 200 ms turns: of 4 calls sent at once, some find it full and retry.
    const replies = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        client.request('slow', 's', { n }, { timeoutMs: 15_000, retries: 1000 }),
      ),
    );
    expect(replies).to.deep.equal(['node-0', 'node-0', 'node-0', 'node-0']);
    const calls = sdk.spans
      .getFinishedSpans()
      .map(viewOf)
      .filter((s) => s.name === 'slow/object' && s.kind === SpanKind.CLIENT);
    expect(calls).to.have.length(4);
    const retried = calls.filter((s) => s.events.some((e) => e.name === 'retry'));
    expect(retried.length).to.be.at.least(1);
    for (const s of retried) {
      const events = s.events.filter((e) => e.name === 'retry');
      events.forEach((e, i) => {
        // A full grain mailbox refuses with OverloadedError (limit mailbox.capacity) since #26.
        // Not load shedding: that refuses only beyond 64 pending calls (LoadShedder's
        // MIN_SHED_PENDING) and here are at most four. ERR_MAILBOX_FULL stays accepted for a
        // core mailbox's MailboxFullError.
        expect(['ERR_MAILBOX_FULL', 'ERR_OVERLOADED']).to.include(e.attributes['granary.reason']);
        expect(e.attributes['granary.attempt']).to.equal(i + 1);
        expect(e.attributes['server.address']).to.equal('127.0.0.1');
      });
      expect(s.status.code).to.equal(SpanStatusCode.UNSET);
    }
  });

  it('a failed call carries error.type on its client and server spans', async () => {
    const err = await client.request('fail', 'f', { n: 1 }, { timeoutMs: 15_000 }).catch((e) => e);
    expect(GrainError.is(err)).to.equal(true);
    const spans = await allSpans();
    const clientSpan = one(
      spans,
      (s) => s.node === 'test' && s.name === 'fail/object' && s.kind === SpanKind.CLIENT,
      'client span',
    );
    expect(clientSpan.status.code).to.equal(SpanStatusCode.ERROR);
    expect(clientSpan.attributes['error.type']).to.equal('ERR_GRAIN');
    const serverSpan = one(
      spans,
      (s) => s.node === 'node-1' && s.name === 'fail/object' && s.kind === SpanKind.SERVER,
      'server span',
    );
    expect(serverSpan.traceId).to.equal(clientSpan.traceId);
    expect(serverSpan.parentSpanId).to.equal(clientSpan.spanId);
    expect(serverSpan.status.code).to.equal(SpanStatusCode.ERROR);
    expect(serverSpan.attributes['error.type']).to.equal('ERR_TEST_REFUSED');
  });
});
