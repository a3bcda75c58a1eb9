import { expect } from 'chai';
import {
  enumMemberName,
  extensionPropertyName,
  importAlias,
  methodName,
  outputFileName,
  propertyName,
  relativeImport,
  runtimeFullName,
  runtimeName,
  typeNameInFile,
} from '../src/generator/names';

describe('names', () => {
  it('typeNameInFile joins nested names with _ below the package', () => {
    expect(typeNameInFile('shop.Order.Line', 'shop')).to.equal('Order_Line');
    expect(typeNameInFile('Top', '')).to.equal('Top');
  });

  it('typeNameInFile escapes reserved words and globals generated code uses', () => {
    expect(typeNameInFile('p.class', 'p')).to.equal('class_');
    expect(typeNameInFile('p.Promise', 'p')).to.equal('Promise_');
    expect(typeNameInFile('p.string', 'p')).to.equal('string_');
    expect(typeNameInFile('p.ReturnType', 'p')).to.equal('ReturnType_');
    expect(typeNameInFile('p.Order', 'p')).to.equal('Order');
  });

  it('propertyName is protobufjs camelCase', () => {
    expect(propertyName('order_id')).to.equal('orderId');
    expect(propertyName('a_b_c')).to.equal('aBC');
    expect(propertyName('_private')).to.equal('_private');
    expect(propertyName('already')).to.equal('already');
  });

  it('methodName lower-cases the first letter and escapes members of the base classes', () => {
    expect(methodName('GetOrder')).to.equal('getOrder');
    expect(methodName('constructor')).to.equal('constructor_');
    expect(methodName('Receive')).to.equal('receive_');
    expect(methodName('Identity')).to.equal('identity_');
    expect(methodName('State')).to.equal('state_');
    expect(methodName('WriteState')).to.equal('writeState_');
    expect(methodName('ClearState')).to.equal('clearState_');
    expect(methodName('StateVersion')).to.equal('stateVersion_');
    expect(methodName('delete')).to.equal('delete');
  });

  it('every name JavaScript gives a meaning to gets a trailing _, in every role', () => {
    const hostile = [
      'then',
      'constructor',
      '__proto__',
      'prototype',
      'toString',
      'valueOf',
      'hasOwnProperty',
    ];
    for (const name of hostile) {
      expect(typeNameInFile(`p.${name}`, 'p'), 'type').to.equal(`${name}_`);
      expect(propertyName(name), 'property').to.equal(`${name}_`);
      expect(enumMemberName(name), 'enum member').to.equal(`${name}_`);
    }
    expect(methodName('Then')).to.equal('then_');
    expect(methodName('ToString')).to.equal('toString_');
    expect(methodName('HasOwnProperty')).to.equal('hasOwnProperty_');
    expect(propertyName('to_string')).to.equal('toString_');
    expect(propertyName('to_json')).to.equal('toJson'); // camelCase never spells toJSON
    expect(enumMemberName('delete')).to.equal('delete');
  });

  it('the embedded descriptor renames only __proto__, which protobufjs cannot hold', () => {
    expect(runtimeName('__proto__')).to.equal('__proto___');
    expect(runtimeName('constructor')).to.equal('constructor');
    expect(runtimeFullName('a.__proto__.then')).to.equal('a.__proto___.then');
    expect(extensionPropertyName('pkg.__proto__.lot_numbers', 'lotNumbers')).to.equal(
      '.pkg.__proto___.lotNumbers',
    );
    expect(extensionPropertyName('top', 'top')).to.equal('.top');
  });

  it('outputFileName and relativeImport follow the .proto layout', () => {
    expect(outputFileName('shop/orders.proto')).to.equal('shop/orders.granary.ts');
    expect(relativeImport('shop/orders.proto', 'common/types.proto', '')).to.equal(
      '../common/types.granary',
    );
    expect(relativeImport('shop/orders.proto', 'shop/events.proto', '.js')).to.equal(
      './events.granary.js',
    );
    expect(relativeImport('a.proto', 'b.proto', '')).to.equal('./b.granary');
  });

  it('importAlias cannot collide with a proto identifier', () => {
    expect(importAlias('common/types.proto')).to.equal('$common_types');
  });
});
