import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from '../src/index';

describe('VERSION', () => {
  it('equals the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as {
      version: string;
    };
    expect(VERSION).to.equal(pkg.version);
  });
});
