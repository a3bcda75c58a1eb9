import { expect } from 'chai';
import { serialization } from '@granary/core';
import { Item } from './golden/proto2/catalog.granary';
import { protocEncode } from './helpers/reference';

const FILE = 'proto2/catalog.proto';
const ITEM = 'granary.test.proto2.Item';

/** Text-format items, each with [default] fields left out, set to their default, or to another value. */
const TEXTS = [
  'sku: "a"',
  'sku: "a" count: 16',
  'sku: "a" count: 0 title: "untitled \\"item\\"\\n" active: true grade: GRADE_B',
  'sku: "a" floor: -inf unknown: nan tag: "a\\001\\\\z" offset: -9007199254740991',
  'sku: "a" Dimensions { } Part { name: "p" } Part { name: "q" weight: 1 Origin { } }',
  'sku: "a" Dimensions { width: 1.5 } Part { name: "p" Origin { country: "NZ" } }',
];

describe('proto2 [default] fields (test/protos/proto2/catalog.proto)', () => {
  for (const text of TEXTS) {
    it(`a decoded message encodes to the bytes protoc wrote: ${text}`, () => {
      const bytes = protocEncode(FILE, ITEM, text);
      const decoded = Item.decode(bytes);
      expect(Item.encode(decoded)).to.deep.equal(bytes);
      expect(Item.encode(Item.from(decoded))).to.deep.equal(bytes);
    });
  }

  it('an unset field still reads as its default, at every depth', () => {
    const decoded = Item.decode(protocEncode(FILE, ITEM, TEXTS[4] ?? ''));
    expect(decoded.count).to.equal(16);
    expect(decoded.floor).to.equal(-Infinity);
    expect(decoded.dimensions?.width).to.equal(1.5);
    expect(decoded.part[1]?.origin?.country).to.equal('NZ');
  });

  it('a default changed after decoding is written, and one set by the caller is written', () => {
    const decoded = Item.decode(protocEncode(FILE, ITEM, 'sku: "a"'));
    decoded.count = 5;
    expect(Item.encode(decoded)).to.deep.equal(protocEncode(FILE, ITEM, 'sku: "a" count: 5'));
    expect(Item.encode({ sku: 'a', count: 16 })).to.deep.equal(
      protocEncode(FILE, ITEM, 'sku: "a" count: 16'),
    );
  });

  it('the decoded object is unchanged by encoding it (no field removed)', () => {
    const decoded = Item.decode(protocEncode(FILE, ITEM, TEXTS[4] ?? ''));
    const before = JSON.stringify(decoded);
    Item.encode(decoded);
    expect(JSON.stringify(decoded)).to.equal(before);
  });

  it('a create()d message sent through the serialization registry (cluster.send) leaves unset defaults off the wire', () => {
    // The remote encodes a tagged message with the registry, not with its codec.
    const cases: [init: Parameters<typeof Item.create>[0], text: string][] = [
      [{ sku: 'a' }, 'sku: "a"'],
      [{ sku: 'a', count: 16, active: true }, 'sku: "a" count: 16 active: true'],
      [
        { sku: 'a', dimensions: {}, part: [{ name: 'p' }] },
        'sku: "a" Dimensions { } Part { name: "p" }',
      ],
    ];
    for (const [init, text] of cases) {
      const sent = serialization.serialize(Item.create(init));
      expect(sent.typeName).to.equal(ITEM);
      expect(sent.bytes, text).to.deep.equal(new Uint8Array(protocEncode(FILE, ITEM, text)));
      const received = Item.from(serialization.deserialize(sent.typeName, sent.bytes));
      expect(Item.encode(received), text).to.deep.equal(Item.encode(Item.create(init)));
    }
  });
});
