import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { AsyncPool } from '../src/async-pool';
import {
  PoolAbortError,
  PoolClosedError,
  PoolDisposeError,
  PoolElementError,
  PoolFactoryError,
  PoolTimeoutError,
} from '../src/errors';

interface Conn {
  id: number;
  closed: boolean;
}

/** A pool of fake connections that records what it built and closed. */
function connPool(max: number, extra: { failCreate?: () => boolean; failClose?: boolean } = {}) {
  const built: Conn[] = [];
  const pool = new AsyncPool<Conn>({
    max,
    create: async () => {
      await Promise.resolve();
      if (extra.failCreate?.()) throw new Error('connect refused');
      const conn = { id: built.length, closed: false };
      built.push(conn);
      return conn;
    },
    close: (conn) => {
      if (extra.failClose) throw new Error(`close ${conn.id} failed`);
      conn.closed = true;
    },
  });
  return { pool, built };
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** Resolves once every queued microtask and promise job has run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('AsyncPool', () => {
  describe('constructor', () => {
    it('rejects a max below 1 with InvalidOptionError naming the option', () => {
      expect(() => new AsyncPool({ create: () => 1, max: 0 }))
        .to.throw(InvalidOptionError)
        .with.property('option', 'max');
    });
  });

  describe('get', () => {
    it('builds elements lazily, only when none is free', async () => {
      const { pool, built } = connPool(3);
      expect(built).to.have.length(0);
      const a = await pool.get();
      expect(built).to.have.length(1);
      pool.release(a);
      const b = await pool.get();
      expect(b).to.equal(a);
      expect(built).to.have.length(1);
    });

    it('returns a free element at once (free-first) instead of building one', async () => {
      const { pool, built } = connPool(4);
      const a = await pool.get();
      const b = await pool.get();
      pool.release(a);
      const c = await pool.get();
      expect(c).to.equal(a);
      expect(built).to.have.length(2);
      expect(pool.stats()).to.include({ size: 2, leased: 2, free: 0 });
      pool.release(b);
      pool.release(c);
    });

    it('never builds more than max elements', async () => {
      const { pool, built } = connPool(2);
      const leases = [pool.get(), pool.get(), pool.get(), pool.get()];
      await settle();
      expect(built).to.have.length(2);
      expect(pool.stats()).to.include({ size: 2, waiting: 2 });
      const [a, b] = await Promise.all(leases.slice(0, 2));
      pool.release(a!);
      pool.release(b!);
      await Promise.all(leases.slice(2));
      expect(built).to.have.length(2);
    });

    it('serves waiters first-in first-out', async () => {
      const { pool } = connPool(1);
      const held = await pool.get();
      const order: number[] = [];
      const waiters = [1, 2, 3].map((n) =>
        pool.get().then((conn) => {
          order.push(n);
          pool.release(conn);
        }),
      );
      pool.release(held);
      await Promise.all(waiters);
      expect(order).to.deep.equal([1, 2, 3]);
    });

    it('rejects with PoolTimeoutError when nothing frees up within timeoutMs', async () => {
      const { pool } = connPool(1);
      const held = await pool.get();
      const err = await rejection(pool.get({ timeoutMs: 20 }));
      expect(err).to.be.instanceOf(PoolTimeoutError);
      expect(err).to.include({ code: 'ERR_POOL_TIMEOUT', timeoutMs: 20 });
      expect(err.message).to.contain('(timeoutMs)');
      expect(pool.stats().waiting).to.equal(0);
      pool.release(held);
      expect(pool.stats().free).to.equal(1);
    });

    it('rejects with an AbortError when the signal fires, and the waiter leaves the queue', async () => {
      const { pool } = connPool(1);
      const held = await pool.get();
      const ac = new AbortController();
      const pending = pool.get({ signal: ac.signal });
      const next = pool.get();
      ac.abort(new Error('user went away'));
      const err = await rejection(pending);
      expect(err).to.be.instanceOf(PoolAbortError);
      expect(err).to.include({ name: 'AbortError', code: 'ERR_ABORTED' });
      expect((err.cause as Error).message).to.equal('user went away');
      pool.release(held);
      expect(await next).to.equal(held);
    });

    it('rejects at once when the signal is already aborted', async () => {
      const { pool, built } = connPool(1);
      const err = await rejection(pool.get({ signal: AbortSignal.abort() }));
      expect(err.name).to.equal('AbortError');
      expect(built).to.have.length(0);
    });

    it('fails one caller with PoolFactoryError when create throws, and frees the slot', async () => {
      let fail = true;
      const { pool, built } = connPool(1, { failCreate: () => fail });
      const err = await rejection(pool.get());
      expect(err).to.be.instanceOf(PoolFactoryError);
      expect(err).to.include({ code: 'ERR_POOL_FACTORY' });
      expect((err.cause as Error).message).to.equal('connect refused');
      expect(pool.stats()).to.include({ size: 0, building: 0 });
      fail = false;
      const conn = await pool.get();
      expect(built).to.deep.equal([conn]);
    });

    it('keeps an element built for a caller that gave up, for the next caller', async () => {
      let finish!: (c: Conn) => void;
      const pool = new AsyncPool<Conn>({
        max: 1,
        create: () => new Promise<Conn>((resolve) => (finish = resolve)),
      });
      const err = await rejection(pool.get({ timeoutMs: 5 }));
      expect(err).to.be.instanceOf(PoolTimeoutError);
      finish({ id: 7, closed: false });
      await settle();
      expect(pool.stats()).to.include({ free: 1, building: 0 });
      expect((await pool.get()).id).to.equal(7);
    });
  });

  describe('release', () => {
    it('throws PoolElementError for an element that is not leased', async () => {
      const { pool } = connPool(1);
      const conn = await pool.get();
      pool.release(conn);
      expect(() => pool.release(conn)).to.throw(PoolElementError);
      expect(() => pool.release({ id: 99, closed: false })).to.throw(PoolElementError);
      expect(pool.stats()).to.include({ free: 1, leased: 0 });
    });
  });

  describe('destroy', () => {
    it('closes a failed element and builds a replacement lazily', async () => {
      const { pool, built } = connPool(1);
      const bad = await pool.get();
      await pool.destroy(bad);
      expect(bad.closed).to.equal(true);
      expect(pool.stats()).to.include({ size: 0 });
      expect(built).to.have.length(1);
      const fresh = await pool.get();
      expect(fresh).to.not.equal(bad);
      expect(built).to.have.length(2);
    });

    it('builds the replacement at once for a caller already waiting', async () => {
      const { pool } = connPool(1);
      const bad = await pool.get();
      const waiting = pool.get();
      await pool.destroy(bad);
      const fresh = await waiting;
      expect(fresh.id).to.equal(1);
    });

    it('rejects with PoolDisposeError when closing the element fails', async () => {
      const { pool } = connPool(1, { failClose: true });
      const conn = await pool.get();
      const err = await rejection(pool.destroy(conn));
      expect(err).to.be.instanceOf(PoolDisposeError);
      expect(pool.stats().size).to.equal(0);
    });
  });

  describe('use', () => {
    it('returns what fn returns and releases the element', async () => {
      const { pool } = connPool(1);
      expect(await pool.use((c) => c.id + 40)).to.equal(40);
      expect(pool.stats()).to.include({ free: 1, leased: 0 });
    });

    it('never leaks an element when fn throws', async () => {
      const { pool, built } = connPool(1);
      for (let i = 0; i < 5; i++) {
        const err = await rejection(
          pool.use(async () => {
            throw new Error(`boom ${i}`);
          }),
        );
        expect(err.message).to.equal(`boom ${i}`);
      }
      expect(pool.stats()).to.include({ free: 1, leased: 0 });
      expect(built).to.have.length(1);
    });

    it('destroys the element when fn throws and destroyOnError is set', async () => {
      const closed: number[] = [];
      let n = 0;
      const pool = new AsyncPool({
        max: 1,
        destroyOnError: true,
        create: () => ++n,
        close: (el) => void closed.push(el),
      });
      await rejection(
        pool.use(() => {
          throw new Error('protocol error');
        }),
      );
      await settle();
      expect(closed).to.deep.equal([1]);
      expect(await pool.use((el) => el)).to.equal(2);
    });
  });

  describe('close', () => {
    it('rejects waiters and later gets with PoolClosedError', async () => {
      const { pool } = connPool(1);
      const held = await pool.get();
      const waiting = pool.get();
      await pool.close();
      const err = await rejection(waiting);
      expect(err).to.be.instanceOf(PoolClosedError);
      expect(err).to.include({ code: 'ERR_POOL_CLOSED' });
      expect(await rejection(pool.get())).to.be.instanceOf(PoolClosedError);
      pool.release(held);
    });

    it('closes free elements at once and leased ones when they come back', async () => {
      const { pool, built } = connPool(2);
      const a = await pool.get();
      const b = await pool.get();
      pool.release(a);
      await pool.close();
      expect(a.closed).to.equal(true);
      expect(b.closed).to.equal(false);
      pool.release(b);
      await settle();
      expect(b.closed).to.equal(true);
      expect(built.every((c) => c.closed)).to.equal(true);
    });

    it('waits for an element still being built and closes it', async () => {
      let finish!: (c: Conn) => void;
      const closed: number[] = [];
      const pool = new AsyncPool<Conn>({
        max: 1,
        create: () => new Promise<Conn>((resolve) => (finish = resolve)),
        close: (c) => void closed.push(c.id),
      });
      const waiting = pool.get();
      let done = false;
      const closing = pool.close().then(() => (done = true));
      expect(await rejection(waiting)).to.be.instanceOf(PoolClosedError);
      await settle();
      expect(done).to.equal(false);
      finish({ id: 5, closed: false });
      await closing;
      expect(closed).to.deep.equal([5]);
    });

    it('is idempotent', async () => {
      const { pool } = connPool(1);
      await pool.use(() => 0);
      const first = pool.close();
      expect(pool.close()).to.equal(first);
      await first;
    });

    it('counts and reports close failures that no caller awaits', async () => {
      const reported: Error[] = [];
      const pool = new AsyncPool({
        max: 1,
        create: () => ({}),
        close: () => {
          throw new Error('socket already gone');
        },
        onError: (err) => void reported.push(err),
      });
      const el = await pool.get();
      await pool.close();
      pool.release(el);
      await settle();
      expect(pool.stats().errors).to.equal(1);
      expect(reported[0]).to.be.instanceOf(PoolDisposeError);
    });
  });
});
