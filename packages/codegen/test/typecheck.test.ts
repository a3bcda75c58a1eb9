import { expect } from 'chai';
import { join } from 'node:path';
import { GOLDEN_DIR, listFiles } from './helpers/paths';
import { RESOLUTIONS, typeCheck } from './helpers/type-check';

describe('generated code', () => {
  const files = listFiles(GOLDEN_DIR).map((f) => join(GOLDEN_DIR, f));

  for (const resolution of Object.keys(RESOLUTIONS) as (keyof typeof RESOLUTIONS)[]) {
    it(`type-checks under strict and stricter flags with ${resolution} resolution`, function () {
      this.timeout(60_000);
      expect(typeCheck(files, resolution)).to.equal('');
      expect(files).to.have.length.greaterThan(20);
    });
  }
});
