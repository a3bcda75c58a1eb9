import { expect } from 'chai';
import { join } from 'node:path';
import { SerializationRegistry } from '@granary/core';
import * as testkit from '../src/index';

/** This package's compiled index loaded a second time, as another installed copy would be. */
function otherCopy(): typeof testkit {
  return testkit.loadModuleCopy<typeof testkit>(join(__dirname, '../src/index.js'));
}

describe('errors', () => {
  it('every error class extends GranaryError, has its own code, and is() works across copies and the wire', () => {
    expect(testkit.checkErrorClasses(testkit, { copy: otherCopy() })).to.deep.equal([]);
  });

  it('a BinaryMissingError made by another copy crosses the wire with its fields, and is() holds', () => {
    const registry = new SerializationRegistry();
    const theirs = new (otherCopy().BinaryMissingError)('etcd', 'etcd-server');
    expect(theirs).to.not.be.instanceOf(testkit.BinaryMissingError);
    expect(testkit.BinaryMissingError.is(theirs)).to.equal(true);
    expect(testkit.TestkitError.is(theirs)).to.equal(true);
    const out = registry.serialize(theirs);
    const back = registry.deserialize(out.typeName, out.bytes, out.format);
    expect(back).to.be.instanceOf(testkit.BinaryMissingError);
    expect(back).to.include({ binary: 'etcd', debianPackage: 'etcd-server' });
  });
});

describe('checkErrorClasses', () => {
  it('reports a class that does not extend GranaryError, one without a code, and one not registered', () => {
    class PlainError extends Error {}
    class NoCodeError extends testkit.TestkitError {}
    class UnregisteredError extends testkit.TestkitError {
      static override readonly code = 'ERR_TEST_UNREGISTERED';
    }
    expect(checkOnly({ PlainError, NoCodeError, UnregisteredError })).to.deep.equal([
      'PlainError does not extend GranaryError',
      'NoCodeError declares no static code of its own',
      'UnregisteredError does not come off the wire as itself (registerErrorClasses)',
    ]);
  });

  it('reports a copy that shares its classes with the original', () => {
    expect(testkit.checkErrorClasses(testkit, { copy: testkit })).to.include(
      'TestkitError: the copy does not have its own class',
    );
  });
});

function checkOnly(classes: Record<string, unknown>): string[] {
  return testkit.checkErrorClasses(classes);
}
