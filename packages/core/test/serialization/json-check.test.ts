import { expect } from 'chai';
import { SerializationError } from '../../src/errors';
import { Started } from '../../src/messages';
import { PID } from '../../src/pid';
import { Props } from '../../src/props';
import { checkJsonDepth, MAX_JSON_DEPTH } from '../../src/serialization/internal/json-check';
import { decodeJson, encodeJsonText } from '../../src/serialization/internal/json-codec';
import { rejectionOf, startNode, stopNodes, type TestNode } from '../remote/helpers';

function thrown(fn: () => unknown): SerializationError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(SerializationError);
    return err as SerializationError;
  }
  throw new Error('expected a SerializationError');
}

function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('JSON messages at the API', () => {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const cases: Array<[string, unknown, string, string]> = [
    ['a BigInt', { order: { total: 10n } }, '$.order.total', 'BigInt'],
    ['a cycle', { list: [cycle] }, '$.list[0].self', 'cycle'],
    ['a Map', { byId: new Map([[1, 2]]) }, '$.byId', 'Map'],
    ['a Set', [1, new Set([1])], '$[1]', 'Set'],
    ['a function', { cb: () => 1 }, '$.cb', 'function'],
    ['a symbol', { 'odd key': Symbol('x') }, '$["odd key"]', 'symbol'],
    ['a BigInt at the top', 5n, '$', 'BigInt'],
  ];
  for (const [name, value, path, word] of cases) {
    it(`refuses ${name}, naming the path ${path}`, () => {
      const err = thrown(() => encodeJsonText(value));
      expect(err.path).to.equal(path);
      expect(err.message).to.contain(word).and.to.contain(path);
      expect(err.code).to.equal('ERR_SERIALIZATION');
    });
  }

  it('finds the path in a message too large to scan ahead (the replacer path)', () => {
    const big = { items: Array.from({ length: 2000 }, (_, i) => ({ i })) } as Record<
      string,
      unknown
    >;
    (big.items as Array<Record<string, unknown>>)[1500]!.when = 7n;
    expect(thrown(() => encodeJsonText(big)).path).to.equal('$.items[1500].when');
  });

  it('counts only brackets outside strings: escaped quotes and backslash runs end a string where JSON does', () => {
    const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    const pad = 'x'.repeat(MAX_JSON_DEPTH);
    const fine = [
      JSON.stringify({ s: '['.repeat(1000), pad }),
      JSON.stringify({ s: 'a"b\\"[[[' + '{'.repeat(600), t: '\\', pad }),
      `[${JSON.stringify('\\'.repeat(7) + '"' + '['.repeat(400))}, "${pad}"]`,
      deep(MAX_JSON_DEPTH),
    ];
    for (const text of fine) expect(() => checkJsonDepth(text), text.slice(0, 40)).to.not.throw();
    const tooDeep = [
      deep(MAX_JSON_DEPTH + 1),
      // After a string ending in an escaped backslash (\\"), the brackets count again.
      `[${JSON.stringify('x\\')}, ${deep(MAX_JSON_DEPTH)}]`,
      JSON.stringify({ s: 'q"uote', pad }).slice(0, -1) + `, "n": ${deep(MAX_JSON_DEPTH)}}`,
    ];
    for (const text of tooDeep) {
      JSON.parse(text); // each is JSON
      expect(thrown(() => checkJsonDepth(text)).message, text.slice(0, 40)).to.contain(
        'MAX_JSON_DEPTH',
      );
    }
    // The scan keeps no state between texts (its pattern's position is reset after a throw).
    expect(() => checkJsonDepth(fine[0]!)).to.not.throw();
  });

  it(`limits nesting to MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) when encoding and decoding`, () => {
    expect(encodeJsonText(nested(MAX_JSON_DEPTH - 1))).to.be.a('string');
    expect(thrown(() => encodeJsonText(nested(MAX_JSON_DEPTH + 1))).message).to.contain(
      'MAX_JSON_DEPTH',
    );
    const deep = Buffer.from('['.repeat(100_000) + ']'.repeat(100_000));
    expect(thrown(() => decodeJson(deep)).message).to.contain('MAX_JSON_DEPTH');
    expect(
      decodeJson(Buffer.from('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}')),
    ).to.deep.equal({
      a: '['.repeat(44),
    });
  });

  describe('over the remote', function () {
    this.timeout(20000);
    const nodes: TestNode[] = [];
    after(() => stopNodes(nodes));

    it('fails a request whose message cannot be serialized with the path, and sends nothing', async () => {
      const a = await startNode();
      const b = await startNode();
      nodes.push(a, b);
      let received = 0;
      b.system.root.spawnNamed(
        Props.fromFunc((ctx) => void (ctx.message instanceof Started || received++)),
        'sink',
      );
      const err = await rejectionOf(
        a.system.root.request(
          new PID(b.address, 'sink'),
          { user: { id: 1n } },
          { timeoutMs: 2000 },
        ),
      );
      expect(err).to.be.instanceOf(SerializationError);
      expect((err as SerializationError).path).to.equal('$.user.id');
      expect(() => a.system.root.send(new PID(b.address, 'sink'), new Map())).to.throw(
        SerializationError,
      );
      expect(received).to.equal(0);
    });
  });
});
