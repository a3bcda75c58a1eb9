import { SerializationError } from '../../src/errors';
import { expect } from 'chai';
import { decodeJson, encodeJson } from '../../src/serialization/internal/json-codec';

const roundTrip = (value: unknown): unknown => decodeJson(encodeJson(value)!);
const text = (value: unknown): string => Buffer.from(encodeJson(value)!).toString('utf8');

describe('JSON codec', () => {
  it('writes plain data exactly as JSON.stringify does', () => {
    const value = { n: 1, s: 'é', list: [1, { a: null }], nested: { deep: { x: true } } };
    expect(text(value)).to.equal(JSON.stringify(value));
  });

  it('keeps bytes anywhere in the tree: top level, in objects, in arrays, Buffers', () => {
    const value = {
      a: new Uint8Array([1, 2, 3]),
      list: [{ b: Buffer.from([250, 0]) }],
      deep: { x: { y: [new Uint8Array([7])] } },
    };
    const back = roundTrip(value) as typeof value;
    expect([...back.a]).to.deep.equal([1, 2, 3]);
    expect(back.a).to.be.instanceOf(Uint8Array);
    expect([...(back.list[0]!.b as Uint8Array)]).to.deep.equal([250, 0]);
    expect([...back.deep.x.y[0]!]).to.deep.equal([7]);
    expect([...(roundTrip(new Uint8Array([9, 8])) as Uint8Array)]).to.deep.equal([9, 8]);
  });

  it("keeps bytes returned by an object's toJSON", () => {
    const value = { wrapped: { toJSON: () => ({ raw: new Uint8Array([4, 5]) }) } };
    const back = roundTrip(value) as { wrapped: { raw: Uint8Array } };
    expect([...back.wrapped.raw]).to.deep.equal([4, 5]);
  });

  it('keeps bytes at the end of a tree larger than the scan budget', () => {
    const list: unknown[] = Array.from({ length: 5000 }, (_, i) => ({ i }));
    list.push({ last: new Uint8Array([42]) });
    const back = roundTrip({ list }) as { list: { last?: Uint8Array }[] };
    expect([...back.list[5000]!.last!]).to.deep.equal([42]);
  });

  it('rejects a cycle with SerializationError naming where it closes', () => {
    const a: Record<string, unknown> = {};
    a.self = [a, a];
    expect(() => encodeJson(a))
      .to.throw(SerializationError)
      .with.property('path', '$.self[0]');
  });

  it('returns undefined for a value JSON cannot carry', () => {
    expect(encodeJson(undefined)).to.equal(undefined);
  });
});
