import { expect } from 'chai';
import {
  importAlias,
  methodName,
  outputFileName,
  propertyName,
  relativeImport,
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
    expect(methodName('delete')).to.equal('delete');
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
