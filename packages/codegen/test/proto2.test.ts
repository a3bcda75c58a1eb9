import { expect } from 'chai';
import { Annotations, Grade, Item } from './golden/proto2/catalog.granary';
import type { Item as ItemMessage } from './golden/proto2/catalog.granary';
import { Greeting } from './golden/proto2/escapes.granary';
import { Holder } from './golden/proto2/group_extensions.granary';
import { Reuse, SearchResponse } from './golden/proto2/group_names.granary';
import { Envelope } from './golden/proto2/oneof_groups.granary';
import { Origin } from './golden/proto2/supplement.granary';
import {
  protocDecode,
  protocEncode,
  referenceEncode,
  referenceRoot,
  wireTypes,
} from './helpers/reference';

/** Wire types: 0 varint, 2 length-delimited (packed lists), 3 start group. */
const [VARINT, DELIMITED, START_GROUP] = [0, 2, 3];

/** An item with every field and every extension set (decode gives exactly this back). */
const FULL: ItemMessage = {
  sku: 'sku-1',
  count: 0,
  offset: '5',
  limit: '0',
  floor: 1,
  ratio: 2,
  unknown: 3,
  big: 4,
  title: '',
  tag: new Uint8Array([0xff]),
  grade: Grade.GRADE_C,
  active: false,
  delta: 0,
  note: 'n',
  packedCounts: [1, 2, 300],
  packedDeltas: ['-1', '9007199254740993'],
  plainCounts: [4, 5],
  packedGrades: [Grade.GRADE_A, Grade.GRADE_C],
  dimensions: { width: 2, height: 3 },
  part: [
    { name: 'p1', weight: 7, origin: { country: 'FR' } },
    { name: 'p2', weight: 1 },
  ],
  '.granary.test.proto2.supplier': 'acme',
  '.granary.test.proto2.lotNumbers': [11, 12],
  '.granary.test.proto2.Annotations.reviewedGrade': Grade.GRADE_B,
  '.granary.test.proto2.Annotations.annotations': { reviewer: 'r' },
  '.granary.test.proto2.supplement.origin': { country: 'NZ', region: 'south' },
  '.granary.test.proto2.supplement.batch': '-9',
};

describe('proto2 (test/protos/proto2)', () => {
  const reference = referenceRoot('proto2/catalog.proto', 'proto2/supplement.proto');
  const RefItem = reference.lookupType('granary.test.proto2.Item');

  it('an unset field decodes to its [default] (every kind), one without a default stays absent', () => {
    const item = Item.decode(Item.encode({ sku: 'x' }));
    expect(item).to.deep.equal({
      sku: 'x',
      count: 16,
      offset: '-9007199254740991',
      limit: '9007199254740991',
      floor: -Infinity,
      ratio: 0.25,
      unknown: NaN,
      big: 1e10,
      title: 'untitled "item"\n',
      tag: new Uint8Array([0x61, 0x01, 0x5c, 0x7a]),
      grade: Grade.GRADE_B,
      active: true,
      delta: -7,
      packedCounts: [],
      packedDeltas: [],
      plainCounts: [],
      packedGrades: [],
      part: [],
      '.granary.test.proto2.lotNumbers': [],
    });
    // Nested groups fill their own defaults; extensions stay absent even with a [default].
    const nested = Item.decode(
      Item.encode({ sku: 'y', dimensions: {}, part: [{ name: 'p', origin: {} }] }),
    );
    expect(nested.dimensions).to.deep.equal({ width: 1.5 });
    expect(nested.part).to.deep.equal([{ name: 'p', weight: 1, origin: { country: 'NZ' } }]);
    expect(nested).to.not.have.property('.granary.test.proto2.Annotations.reviewedGrade');
    expect(Item.create({ sku: 'z' })).to.deep.equal(Item.decode(Item.encode({ sku: 'z' })));
  });

  it('group extensions (at file scope and inside a message) are delimited as groups', () => {
    const holder = {
      id: 1,
      '.granary.test.proto2.groupext.top': { t: 2 },
      '.granary.test.proto2.groupext.Scope.inner': [{ s: 'a' }, { s: 'b' }],
    };
    const bytes = Holder.encode(holder);
    expect(wireTypes(bytes).get(100)).to.deep.equal(new Set([START_GROUP]));
    expect(wireTypes(bytes).get(101)).to.deep.equal(new Set([START_GROUP]));
    expect(Holder.decode(bytes)).to.deep.equal(holder);
  });

  it('a string [default] with \\u, octal or hex escapes decodes to the text protoc reads', () => {
    expect(Greeting.decode(new Uint8Array(0))).to.deep.equal({
      unicode: 'caf\u00e9 \u{1F600} \u{1F600}',
      octal: 'caf\u00e9 \u65e5',
      hex: 'caf\u00e9',
      plain: 'tab\there "q" \\u0041 A',
      raw: '\u65e5\u672c caf\u00e9',
      astral: '\u00e9 \u{1F680} ok',
    });
  });

  it('encodes exactly as protobufjs loading the .proto files, and decodes back to itself', () => {
    const bytes = Buffer.from(Item.encode(FULL));
    expect(bytes.equals(referenceEncode(RefItem, FULL))).to.equal(true);
    expect(Item.decode(bytes)).to.deep.equal(FULL);
  });

  it('[packed = true] lists are packed, the others one tag per element, groups delimited', () => {
    const wire = wireTypes(Item.encode(FULL));
    for (const field of [15, 16, 18, 101])
      expect(wire.get(field), `field ${field}`).to.deep.equal(new Set([DELIMITED]));
    expect(wire.get(17)).to.deep.equal(new Set([VARINT]));
    expect(wire.get(20)).to.deep.equal(new Set([START_GROUP]));
    expect(wire.get(23)).to.deep.equal(new Set([START_GROUP]));
  });

  it('protoc --decode reads groups, packed lists and extensions of both files', () => {
    const text = protocDecode(
      'proto2/supplement.proto',
      'granary.test.proto2.Item',
      Item.encode(FULL),
    );
    expect(text)
      .to.contain('packed_counts: 300')
      .and.contain('plain_counts: 5')
      .and.contain('Dimensions {\n  width: 2\n  height: 3\n}')
      .and.contain('Part {\n  name: "p1"\n  weight: 7\n  Origin {\n    country: "FR"\n  }\n}')
      .and.contain('[granary.test.proto2.supplier]: "acme"')
      .and.contain('[granary.test.proto2.lot_numbers]: 12')
      .and.contain('[granary.test.proto2.Annotations.reviewed_grade]: GRADE_B')
      .and.contain('[granary.test.proto2.supplement.origin] {\n  country: "NZ"')
      .and.contain('[granary.test.proto2.supplement.batch]: -9');
  });

  it('a group inside a oneof is a oneof member, delimited as a group, that protoc reads', () => {
    const envelope = { blob: { data: new Uint8Array([1, 2]) }, inner: { deep: { value: '7' } } };
    const bytes = Envelope.encode(envelope);
    expect(wireTypes(bytes).get(5)).to.deep.equal(new Set([START_GROUP]));
    expect(Envelope.decode(bytes)).to.deep.equal({
      ...envelope,
      payload: 'blob',
      inner: { deep: { value: '7' }, choice: 'deep' },
    });
    const text = protocDecode(
      'proto2/oneof_groups.proto',
      'granary.test.proto2.oneofgroups.Envelope',
      bytes,
    );
    expect(text).to.equal(
      'Blob {\n  data: "\\001\\002"\n}\ninner {\n  Deep {\n    value: 7\n  }\n}\n',
    );
  });

  it('a group named in several words is the field protoc names (SearchResult: searchresult)', () => {
    // Text format writes a group by its type's name, the field is `searchresult` in protoc.
    const text = [
      'SearchResult { page_url: "a" SnippetText { html_body: "<b>" } }',
      'SearchResult { page_url: "b" }',
      'PagingInfo { next_offset: 20 }',
      'TimingData { elapsed_us: 7 }',
      '[granary.test.proto2.groupnames.extrafacets] { facet_name: "f" }',
      '[granary.test.proto2.groupnames.Scope.scopedinfo] { is_scoped: true }',
    ].join('\n');
    const file = 'proto2/group_names.proto';
    const type = 'granary.test.proto2.groupnames.SearchResponse';
    const decoded = SearchResponse.decode(protocEncode(file, type, text));
    expect(decoded).to.deep.equal({
      searchresult: [{ pageUrl: 'a', snippettext: { htmlBody: '<b>' } }, { pageUrl: 'b' }],
      paginginfo: { nextOffset: 20 },
      debug: 'timingdata',
      timingdata: { elapsedUs: '7' },
      '.granary.test.proto2.groupnames.extrafacets': { facetName: ['f'] },
      '.granary.test.proto2.groupnames.Scope.scopedinfo': { isScoped: true },
    });
    expect(protocDecode(file, type, SearchResponse.encode(decoded))).to.contain(
      'SearchResult {\n  page_url: "a"\n  SnippetText {\n    html_body: "<b>"',
    );
  });

  it("a field of a group's type, not declared as the group, is length-prefixed as in protoc", () => {
    const text = 'Entry { key: "a" }\ncopy { key: "b" }\ncopies { key: "c" }\ncopies { key: "d" }';
    const file = 'proto2/group_names.proto';
    const expected = protocEncode(file, 'granary.test.proto2.groupnames.Reuse', text);
    const message = {
      entry: { key: 'a' },
      copy: { key: 'b' },
      copies: [{ key: 'c' }, { key: 'd' }],
    };
    const bytes = Reuse.encode(message);
    expect(Buffer.from(bytes).toString('hex')).to.equal(Buffer.from(expected).toString('hex'));
    expect([...wireTypes(bytes)]).to.deep.equal([
      [1, new Set([START_GROUP])],
      [3, new Set([DELIMITED])],
      [4, new Set([DELIMITED])],
    ]);
    expect(Reuse.decode(expected)).to.deep.equal(message);
  });

  it('the extendee and the extension messages keep their own codecs', () => {
    expect(Annotations.decode(Annotations.encode({ reviewer: 'a' }))).to.deep.equal({
      reviewer: 'a',
    });
    expect(Origin.decode(new Uint8Array(0))).to.deep.equal({ region: 'unknown' });
  });
});
