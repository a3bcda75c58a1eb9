import { expect } from 'chai';
import { LinkedQueue } from '../src/internal/linked-queue';

describe('LinkedQueue', () => {
  it('shifts entries in the order they were pushed', () => {
    const q = new LinkedQueue<number>();
    [1, 2, 3].forEach((n) => q.push(n));
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).to.deep.equal([1, 2, 3, undefined]);
    expect(q.length).to.equal(0);
  });

  it('removes an entry from the middle, head or tail, and ignores a second removal', () => {
    const q = new LinkedQueue<string>();
    const a = q.push('a');
    const b = q.push('b');
    const c = q.push('c');
    q.push('d');
    q.remove(b);
    q.remove(b);
    q.remove(a);
    expect(q.length).to.equal(2);
    expect(q.peek()).to.equal('c');
    q.remove(c);
    expect(q.drain()).to.deep.equal(['d']);
    expect(q.length).to.equal(0);
  });
});
