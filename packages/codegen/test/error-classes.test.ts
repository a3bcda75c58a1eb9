import { expect } from 'chai';
import { join } from 'node:path';
import { SerializationRegistry } from '@granary/core';
import { checkErrorClasses, loadModuleCopy } from '@granary/testkit';
import * as codegen from '../src/index';
import * as runtime from '../src/runtime/index';

/** A compiled entry point of this package loaded a second time, as another installed copy would be. */
function otherCopy<T>(entry: string): T {
  return loadModuleCopy<T>(join(__dirname, '../src', entry), join(__dirname, '../src'));
}

describe('error classes', () => {
  it('every generator error class extends GranaryError, has its own code, and is() works across copies and the wire', () => {
    expect(
      checkErrorClasses(codegen, { copy: otherCopy<typeof codegen>('index.js') }),
    ).to.deep.equal([]);
  });

  it('every runtime error class does too', () => {
    expect(
      checkErrorClasses(runtime, { copy: otherCopy<typeof runtime>('runtime/index.js') }),
    ).to.deep.equal([]);
  });

  it('an UnimplementedError made by another copy crosses the wire as itself, with its method', () => {
    const registry = new SerializationRegistry();
    const theirs = new (otherCopy<typeof runtime>('runtime/index.js').UnimplementedError)(
      'demo.Ponger/Ping',
    );
    expect(theirs).to.not.be.instanceOf(runtime.UnimplementedError);
    expect(runtime.UnimplementedError.is(theirs)).to.equal(true);
    const out = registry.serialize(theirs);
    const back = registry.deserialize(out.typeName, out.bytes, out.format);
    expect(back).to.be.instanceOf(runtime.UnimplementedError);
    expect(back).to.include({ method: 'demo.Ponger/Ping', code: 'ERR_UNIMPLEMENTED' });
  });
});
