import { expect } from 'chai';
import { ByteWriter, utf8Length, varintSize } from '../../src/remote/internal/byte-writer';

describe('ByteWriter', () => {
  describe('utf8Length', () => {
    it('agrees with Buffer.byteLength for ASCII, 2-, 3- and 4-byte characters and lone surrogates', () => {
      for (const s of ['', 'future$12', 'größe', '✓ värde', '😀x', 'a\ud800b', '\udc00']) {
        expect(utf8Length(s), s).to.equal(Buffer.byteLength(s));
        // Long text is measured natively: the same lengths.
        const long = s.repeat(300) + 'x'.repeat(300);
        expect(utf8Length(long), `${s} x 300`).to.equal(Buffer.byteLength(long));
      }
    });
  });

  describe('asciiString', () => {
    it('writes short ASCII in one pass and refuses, writing nothing, what it cannot', () => {
      const w = new ByteWriter(8, 0);
      w.ensure(1 + 300);
      expect(w.asciiString('$g/k/id-1')).to.equal(true);
      expect(w.asciiString('größe')).to.equal(false);
      expect(w.asciiString('x'.repeat(128))).to.equal(false);
      expect(w.asciiString('')).to.equal(true);
      const out = Buffer.from(w.finish(new Uint8Array(0)));
      expect([...out]).to.deep.equal([9, ...Buffer.from('$g/k/id-1'), 0]);
    });
  });

  describe('string / bytes / varint', () => {
    it('writes length-prefixed strings and bytes that decode back, short and long', () => {
      const w = new ByteWriter(8, 0);
      const long = 'x'.repeat(300);
      const big = Buffer.alloc(500, 3);
      for (const s of ['ab', 'größe', long]) {
        w.ensure(5 + utf8Length(s));
        w.string(s, utf8Length(s));
      }
      w.ensure(5 + big.length);
      w.bytes(big);
      w.ensure(5);
      w.varint(2 ** 32 - 1);
      const out = w.finish(new Uint8Array(0));
      let pos = 0;
      const next = (): Buffer => {
        const n = out[pos++]! < 0x80 ? out[pos - 1]! : (out[pos - 1]! & 0x7f) | (out[pos++]! << 7);
        const slice = out.subarray(pos, pos + n);
        pos += n;
        return slice;
      };
      expect(next().toString()).to.equal('ab');
      expect(next().toString()).to.equal('größe');
      expect(next().toString()).to.equal(long);
      expect(Buffer.compare(next(), big)).to.equal(0);
      expect(out.length - pos).to.equal(varintSize(2 ** 32 - 1));
    });
  });
});
