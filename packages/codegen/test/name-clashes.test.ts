import { serialization } from '@granary/core';
import { expect } from 'chai';
import type { MessageInit } from '../src/runtime';
import { Holder, LinesClient, LinesGrain } from './golden/hostile/clash_user.granary';
import {
  Members,
  Order,
  Order_Line,
  Order_Line_,
  RegistryClient_,
  RegistryGrain_,
  then__,
} from './golden/hostile/clashes.granary';
import type {
  Order as OrderMessage,
  RegistryClient,
  RegistryGrain,
  registryKind,
  then_,
} from './golden/hostile/clashes.granary';
import { enumMembers } from '../src/generator/member-names';
import { InMemoryCluster } from './helpers/in-memory-cluster';
import { protocDecode, protocEncode } from './helpers/reference';

const FILE = 'hostile/clashes.proto';

/** Answers each rpc whose method name had to be told apart from another's. */
class Registry extends RegistryGrain_ {
  override get(request: RegistryGrain): MessageInit<RegistryClient> {
    return { id: `Get:${request.id ?? ''}` };
  }
  override get_(request: registryKind): MessageInit<Order_Line> {
    return { s: `get:${request.id ?? ''}` };
  }
  override then_(request: then__): MessageInit<then_> {
    return { b: (request.a ?? 0) + 1 };
  }
}

class Lines extends LinesGrain {
  override get(request: Order_Line_): MessageInit<then__> {
    return { a: request.n ?? 0 };
  }
}

describe('declarations protoc accepts that would share a generated name (hostile/clashes)', () => {
  const cluster = new InMemoryCluster(serialization, {
    [RegistryGrain_.kindName]: () => new Registry(),
    [LinesGrain.kindName]: () => new Lines(),
  });

  it('fields camelCased or escaped onto each other keep their own values, as protoc reads them', () => {
    const value = { fooBar_: 1, fooBar: 2, toString__: 'picked' as const, picked: 3, toString_: 4 };
    const bytes = Members.encode(value);
    expect(protocDecode(FILE, 'granary.test.clashes.Members', bytes)).to.equal(
      'foo_bar: 1\nfooBar: 2\npicked: 3\ntoString_: 4\n',
    );
    const fromProtoc = protocEncode(
      FILE,
      'granary.test.clashes.Members',
      'foo_bar: 1 fooBar: 2 picked: 3 toString_: 4',
    );
    expect(bytes).to.deep.equal(fromProtoc);
    expect(Members.decode(fromProtoc)).to.deep.equal(value);
  });

  it('extensions of one camelCase name, and one named as a message, are distinct fields', () => {
    const value: OrderMessage = {
      line: { n: 5 },
      '.granary.test.clashes.lotSize_': 1,
      '.granary.test.clashes.lotSize': 2,
      '.granary.test.clashes.orderLine_': 3,
    };
    const bytes = Order.encode(value);
    const text = protocDecode(FILE, 'granary.test.clashes.Order', bytes);
    expect(text).to.equal(
      'line {\n  n: 5\n}\n[granary.test.clashes.lot_size]: 1\n' +
        '[granary.test.clashes.lotSize]: 2\n[granary.test.clashes.order_line]: 3\n',
    );
    expect(bytes).to.deep.equal(protocEncode(FILE, 'granary.test.clashes.Order', text));
    expect(Order.decode(bytes)).to.deep.equal(value);
  });

  it('a nested and a top-level type joined to one name keep their own codecs', () => {
    expect(Order_Line_.typeName).to.equal('granary.test.clashes.Order.Line');
    expect(Order_Line.typeName).to.equal('granary.test.clashes.Order_Line');
    expect(then__.typeName).to.equal('granary.test.clashes.then');
    const holder = { nested: { n: 1 }, top: { s: 't' }, escaped: { a: 2 } };
    expect(Holder.decode(Holder.encode(holder))).to.deep.equal(holder);
  });

  it('enum values then and then_ get members of their own (protoc only warns)', () => {
    const values = [
      { name: 'then', number: 0 },
      { name: 'THEN', number: 1 },
      { name: 'then_', number: 2 },
    ];
    expect(enumMembers({ name: 'Mode', fullName: 'p.Mode', values })).to.deep.equal([
      'then__',
      'THEN',
      'then_',
    ]);
  });

  it('rpcs Get, get and Then reach their own grain methods through the typed client', async () => {
    const client = RegistryClient_.for(cluster, 'r');
    expect(await client.get({ id: 'a' })).to.deep.equal({ id: 'Get:a' });
    expect(await client.get_({ id: 'b' })).to.deep.equal({ s: 'get:b' });
    expect(await client.then_({ a: 1 })).to.deep.equal({ b: 2 });
    expect(await LinesClient.for(cluster, 'l').get({ n: 7 })).to.deep.equal({ a: 7 });
  });
});
