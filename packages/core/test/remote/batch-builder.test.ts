import { expect } from 'chai';
import { PID } from '../../src/pid';
import { BatchBuilder } from '../../src/remote/internal/batch-builder';
import type { OutboundEnvelope } from '../../src/remote/internal/outbound-envelope';
import { WireTypes, decodeFrame, encodeFrame, payloadOf } from '../../src/remote/internal/wire';

function env(targetId: string, typeName: string, sender?: PID): OutboundEnvelope {
  return {
    targetId,
    typeName,
    format: 1,
    payload: Buffer.from('{}'),
    sender,
    urgent: false,
    message: {},
  };
}

describe('BatchBuilder', () => {
  it('writes a JSON text payload as UTF-8, as bytes would be', () => {
    const builder = new BatchBuilder();
    const text = JSON.stringify({ name: 'größe ✓ 😀', n: 1 });
    const payloadLength = Buffer.byteLength(text);
    builder.add({ ...env('a', 'json'), payload: text, payloadLength });
    builder.add(env('a', 'json'));
    expect(builder.bytes).to.equal(payloadLength + 2);
    const [first] = decodeFrame(builder.take()).batch!.envelopes;
    expect(Buffer.from(payloadOf(first!)).toString('utf8')).to.equal(text);
  });

  it('sends a deadline as the ms left (at least 1) and nothing for none', () => {
    const builder = new BatchBuilder();
    const now = Date.now();
    builder.add({ ...env('a', 'json'), deadline: now + 60_000 });
    builder.add({ ...env('a', 'json'), deadline: now - 5_000 });
    builder.add({ ...env('a', 'json'), deadline: Infinity });
    builder.add(env('a', 'json'));
    const [future, past, infinite, none] = decodeFrame(builder.take()).batch!.envelopes;
    expect(future!.timeoutMs).to.be.within(59_000, 60_000);
    expect(past!.timeoutMs).to.equal(1);
    expect(infinite!.timeoutMs).to.equal(0);
    expect(none!.timeoutMs).to.equal(0);
  });

  describe('take', () => {
    it('writes each type name, target id and sender address once per batch', () => {
      const builder = new BatchBuilder();
      const a = new PID('10.0.0.1:1', '$1');
      const b = new PID('10.0.0.1:1', '$2');
      for (let i = 0; i < 100; i++)
        builder.add(env(i % 2 ? 'echo' : 'sink', i % 3 ? 'app.Ping' : 'json', i % 2 ? a : b));
      builder.add(env('echo', 'app.Ping'));
      const frame = decodeFrame(builder.take());
      const batch = frame.batch!;
      expect(batch.typeNames).to.have.members(['app.Ping', 'json']);
      expect(batch.targetIds).to.have.members(['echo', 'sink']);
      expect(batch.senderAddresses).to.deep.equal(['10.0.0.1:1']);
      expect(batch.envelopes).to.have.length(101);
      const first = batch.envelopes[0]!;
      expect(batch.targetIds[first.target]).to.equal('sink');
      expect(batch.typeNames[first.type]).to.equal('json');
      expect(batch.senderAddresses[first.senderAddress - 1]).to.equal('10.0.0.1:1');
      expect(first.senderId).to.equal('$2');
      expect(batch.envelopes[100]!.senderAddress).to.equal(0);
    });

    it('round-trips every envelope field: format, payload, sender, headers, urgent', () => {
      const builder = new BatchBuilder();
      builder.add({
        targetId: 't',
        typeName: 'app.X',
        format: 2,
        payload: Buffer.from([1, 2, 3]),
        sender: new PID('h:1', 'f$7'),
        header: { trace: 'abc', tenant: 'x' },
        urgent: true,
        message: undefined,
      });
      builder.add({
        targetId: 't',
        typeName: 'bytes',
        format: 0,
        payload: new Uint8Array(0),
        urgent: false,
        message: undefined,
      });
      const batch = decodeFrame(builder.take()).batch!;
      const [first, second] = batch.envelopes;
      expect(first!.format).to.equal(2);
      expect([...payloadOf(first!)]).to.deep.equal([1, 2, 3]);
      expect(batch.senderAddresses[first!.senderAddress - 1]).to.equal('h:1');
      expect(first!.senderId).to.equal('f$7');
      expect(first!.header).to.deep.equal({ trace: 'abc', tenant: 'x' });
      expect(first!.urgent).to.equal(true);
      expect(second!.format).to.equal(0);
      expect(payloadOf(second!).byteLength).to.equal(0);
      expect(second!.header).to.equal(undefined);
      expect(second!.urgent).to.equal(false);
      expect(batch.typeNames[second!.type]).to.equal('bytes');
    });

    it('writes the layout of remote.proto, readable by the generic protobufjs decoder', () => {
      const builder = new BatchBuilder();
      builder.add(env('a', 'json', new PID('h:1', '$1')));
      builder.add(env('b', 'bytes'));
      const generic = WireTypes.Frame.decode(builder.take()) as unknown as {
        batch: { targetIds: string[]; envelopes: Array<{ target: number }> };
      };
      expect(generic.batch.targetIds).to.deep.equal(['a', 'b']);
      expect(generic.batch.envelopes.map((e) => generic.batch.targetIds[e.target])).to.deep.equal([
        'a',
        'b',
      ]);
    });

    it('grows its buffer for large payloads, many envelopes and non-ASCII strings', () => {
      const builder = new BatchBuilder();
      const big = Buffer.alloc(100_000, 7);
      builder.add({
        targetId: 'größe',
        typeName: 'app.Ünïcode',
        format: 1,
        payload: big,
        header: { clé: 'värde ✓' },
        urgent: false,
        message: undefined,
      });
      for (let i = 0; i < 3000; i++) builder.add(env(`t${i % 7}`, 'json', new PID('h:1', `$${i}`)));
      const bytes = builder.take();
      const batch = decodeFrame(bytes).batch!;
      expect(batch.envelopes).to.have.length(3001);
      expect(batch.targetIds[batch.envelopes[0]!.target]).to.equal('größe');
      expect(batch.typeNames[batch.envelopes[0]!.type]).to.equal('app.Ünïcode');
      expect(batch.envelopes[0]!.header).to.deep.equal({ clé: 'värde ✓' });
      expect(Buffer.compare(Buffer.from(payloadOf(batch.envelopes[0]!)), big)).to.equal(0);
      expect(batch.envelopes[3000]!.senderId).to.equal('$2999');
      expect(batch.targetIds).to.have.length(8);
      const generic = WireTypes.Frame.decode(bytes) as unknown as {
        batch: { envelopes: unknown[] };
      };
      expect(generic.batch.envelopes).to.have.length(3001);
    });

    it('starts an empty batch after take', () => {
      const builder = new BatchBuilder();
      builder.add(env('x', 'json'));
      builder.take();
      expect(builder.count).to.equal(0);
      builder.add(env('y', 'bytes'));
      const batch = decodeFrame(builder.take()).batch!;
      expect(batch.targetIds).to.deep.equal(['y']);
      expect(batch.typeNames).to.deep.equal(['bytes']);
    });
  });

  describe('decodeFrame', () => {
    it('rejects a batch whose indexes point outside its tables', () => {
      const builder = new BatchBuilder();
      builder.add(env('x', 'json'));
      const bytes = builder.take();
      const frame = decodeFrame(bytes);
      frame.batch!.targetIds.length = 0;
      // Re-encode the tampered batch: same wire layout, the table entry is gone.
      expect(() => decodeFrame(encodeFrame({ batch: frame.batch! }))).to.throw(/outside/);
    });

    it('rejects a truncated batch frame', () => {
      const builder = new BatchBuilder();
      builder.add(env('x', 'json'));
      const bytes = builder.take();
      expect(() => decodeFrame(bytes.subarray(0, bytes.length - 3))).to.throw();
    });

    it('rejects bytes that are not a frame', () => {
      expect(() => decodeFrame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]))).to.throw();
    });
  });
});
