import { expect } from 'chai';
import { InvalidArgumentError } from '@granary/core';
import { fnv1a32, fnv1a32WithNumber, shardOf } from '../../src/placement/shard-of';

describe('shardOf', () => {
  it('hashes the UTF-8 bytes with FNV-1a (known vectors)', () => {
    expect(fnv1a32('')).to.equal(0x811c9dc5);
    expect(fnv1a32('a')).to.equal(0xe40c292c);
    expect(fnv1a32('foobar')).to.equal(0xbf9cf968);
  });

  it('matches a byte-wise FNV-1a over Buffer.from(text, "utf8") for non-ASCII text', () => {
    const byteWise = (text: string): number => {
      let h = 0x811c9dc5;
      for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193);
      return h >>> 0;
    };
    for (const text of ['é', 'grüße', '日本語', '🎉 party', 'a\ud800b', 'x'.repeat(300)]) {
      expect(fnv1a32(text), text).to.equal(byteWise(text));
    }
  });

  it('fnv1a32WithNumber continues a prefix hash with the decimal digits of a number', () => {
    for (const prefix of ['K/', 'Cart/', 'grüße/', '']) {
      const h = fnv1a32(prefix);
      for (let n = 0; n <= 20_000; n++) {
        if (fnv1a32WithNumber(h, n) !== fnv1a32(`${prefix}${n}`)) {
          expect.fail(`${prefix}${n}: ${fnv1a32WithNumber(h, n)} != ${fnv1a32(`${prefix}${n}`)}`);
        }
      }
      for (const n of [99_999, 100_000, 1_048_575, 1 << 20]) {
        expect(fnv1a32WithNumber(h, n), `${prefix}${n}`).to.equal(fnv1a32(`${prefix}${n}`));
      }
    }
  });

  it('returns the same shard in 0..shardCount-1 for the same identity', () => {
    for (let i = 0; i < 1000; i++) {
      const s = shardOf(`player-${i}`, 256);
      expect(s).to.be.within(0, 255);
      expect(shardOf(`player-${i}`, 256)).to.equal(s);
    }
  });

  it('spreads identities over the shards', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOf(`id-${i}`, 16)]++;
    for (const c of counts) expect(c).to.be.within(800, 1200);
  });

  it('rejects a shardCount below 1 with a typed error naming shardCount', () => {
    expect(() => shardOf('x', 0))
      .to.throw(InvalidArgumentError)
      .with.property('argument', 'shardCount');
    expect(() => shardOf('x', 2.5)).to.throw(/shardCount/);
  });
});
