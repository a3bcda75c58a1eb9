import { serialization } from '@granary/core';
import { expect } from 'chai';
import type { MessageInit } from '../src/runtime';
import {
  __proto__Client,
  __proto__Grain,
  thenClient,
  thenGrain,
} from './golden/hostile/services.granary';
import {
  __proto___,
  type Words,
  Words_Word,
  constructor_,
  then_,
} from './golden/hostile/types.granary';
import type { then_ as Then } from './golden/hostile/types.granary';
import { InMemoryCluster } from './helpers/in-memory-cluster';

/** Answers each hostile-named rpc with what it got, marked. */
class ThenGrain extends thenGrain {
  override then_(request: Then): MessageInit<Then> {
    return { ...request, then_: `${request.then_}!` };
  }
  override __proto___(request: __proto___): __proto___ {
    return request;
  }
  override get(words: Words): Words {
    return { ...words, word: Words_Word.__proto___ };
  }
  override for(words: Words): Words {
    return { ...words, word: Words_Word.then_ };
  }
}

class ProtoGrain extends __proto__Grain {
  override get(words: Words): Words {
    return words;
  }
}

/** Every field of `then` set, JavaScript's own member names among them. */
const THEN: Then = {
  then_: 'then',
  constructor_: 'constructor',
  __proto___: 'proto',
  prototype_: 'prototype',
  toString_: 'toString',
  valueOf_: 7,
  hasOwnProperty_: true,
  toJSON_: 'json',
  class: 'class',
  default: 'default',
  delete: 'delete',
  await: 'await',
};

describe('names JavaScript gives a meaning to (test/protos/hostile)', () => {
  const cluster = new InMemoryCluster(serialization, {
    [thenGrain.kindName]: () => new ThenGrain(),
    [__proto__Grain.kindName]: () => new ProtoGrain(),
  });

  it('a client is never a thenable, even of a service and rpc named then', async () => {
    const client = thenClient.for(cluster, 'x');
    expect(await client).to.equal(client);
    expect(await Promise.resolve(client)).to.equal(client);
    expect(cluster.requests).to.have.length(0);
  });

  it('a module whose message is named then is not a thenable namespace', async () => {
    const types = await import('./golden/hostile/types.granary.js');
    expect(types).to.have.property('then_');
    expect(types).to.not.have.property('then');
  });

  it('every hostile field survives encode and decode with its value (no prototype change)', () => {
    const decoded = then_.decode(then_.encode(THEN));
    expect(decoded).to.deep.equal(THEN);
    expect(Object.getPrototypeOf(decoded)).to.equal(Object.prototype);
    expect(String(decoded)).to.equal('[object Object]');
    expect(JSON.parse(JSON.stringify(decoded))).to.deep.equal(THEN);
  });

  it('oneofs named valueOf and toString, a map and a message named __proto__ round-trip', () => {
    const value = {
      valueOf_: 'text' as const,
      text: 't',
      toString_: 'number' as const,
      number: '-1',
    };
    expect(constructor_.decode(constructor_.encode(value))).to.deep.equal(value);
    const proto = { items: [THEN], byName: { a: value } };
    expect(__proto___.decode(__proto___.encode(proto))).to.deep.equal(proto);
    expect(__proto___.typeName).to.equal('granary.test.hostile.__proto___');
  });

  it('rpcs named then, __proto__, get and for are called on the grain across the wire', async () => {
    const client = thenClient.for(cluster, 'y');
    expect(await client.then_(THEN)).to.deep.equal({ ...THEN, then_: 'then!' });
    expect(await client.__proto___({ items: [THEN] })).to.deep.equal({ items: [THEN], byName: {} });
    expect(await client.get({ words: [Words_Word.constructor_] })).to.deep.equal({
      word: Words_Word.__proto___,
      words: [Words_Word.constructor_],
    });
    expect((await client.for({})).word).to.equal(Words_Word.then_);
    const viaProto = __proto__Client.for(cluster, 'z');
    expect(await viaProto.get({ word: Words_Word.hasOwnProperty_ })).to.deep.equal({
      word: Words_Word.hasOwnProperty_,
      words: [],
    });
  });

  it('enum members keep their numbers and the enum object its prototype', () => {
    expect(Words_Word.__proto___).to.equal(2);
    expect(Words_Word[2]).to.equal('__proto___');
    expect(Object.getPrototypeOf(Words_Word)).to.equal(Object.prototype);
    expect(Words_Word.class).to.equal(7);
  });

  it('the deprecated static get still makes the same client as for', () => {
    const viaGet = thenClient.get(cluster, 'w');
    expect(viaGet).to.be.instanceOf(thenClient);
    expect([viaGet.kind, viaGet.identity]).to.deep.equal([thenGrain.kindName, 'w']);
  });
});
