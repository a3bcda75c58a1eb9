import { expect } from 'chai';
import { ActorSystem, PID, silentLogger } from '@granary/core';
import { entryOf, type Process } from '@granary/core/internal';
import { spawnPool } from '../src/pool';
import { behavior, deadLetters, Recorder, until, type Seen } from './pool-support';

/**
 * The pool's router is a core LocalProcess: its PID caches it like an actor's, a send hands it
 * the lane entry, and the entry goes unchanged into a worker's mailbox. These tests pin what
 * that fast path must keep: no registry lookup per send, sender and headers, the registry
 * path (remote inbound delivery) and the stop of the pool.
 */
describe('Pool fast path (the router as a LocalProcess)', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ logger: silentLogger });
  });
  afterEach(() => system.shutdown());

  it("sends to the pool's PID cost no registry lookup (the router is cached like an actor)", async () => {
    const log: Seen[] = [];
    const pool = spawnPool(
      system.root,
      behavior({ poolSize: 4, workerProps: () => new Recorder(log) }),
    );
    await system.root.request(pool, 'warm-up'); // the workers exist and are cached on their PIDs
    const registry = system.registry;
    const get = registry.get.bind(registry);
    let lookups = 0;
    registry.get = (pid: PID): Process => {
      lookups++;
      return get(pid);
    };
    try {
      for (let i = 0; i < 100; i++) system.root.send(pool, i);
    } finally {
      registry.get = get;
    }
    expect(lookups).to.equal(0);
    await until(() => log.length === 101);
    expect(new Set(log.slice(1).map((s) => s.worker)).size).to.equal(4);
  });

  it('keeps sender and headers when a request with headers is forwarded', async () => {
    const log: Seen[] = [];
    const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder(log) }));
    const reply = await system.root.request<{ worker: string }>(pool, 'job', {
      header: { trace: 'abc' },
      timeoutMs: 10_000,
    });
    expect(log[0]!.headers).to.deep.equal({ trace: 'abc' });
    expect(log[0]!.sender!.id).to.match(/^f\$/);
    expect(reply.worker).to.equal(log[0]!.worker);
  });

  it('routes what arrives through the registry path (remote inbound) with sender and headers', async () => {
    const log: Seen[] = [];
    const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder(log) }));
    await system.root.request(pool, 'warm-up');
    const sender = new PID(system.registry.address, 'some-remote-caller');
    const fresh = new PID(pool.address, pool.id); // as decoded from the wire: nothing cached
    system.registry.get(fresh).post(fresh, entryOf('from-afar', sender, { hop: '1' }), false);
    await until(() => log.length === 2);
    expect(log[1]!.message).to.equal('from-afar');
    expect(log[1]!.sender!.equals(sender)).to.equal(true);
    expect(log[1]!.headers).to.deep.equal({ hop: '1' });
  });

  it('gives an urgent message from the registry path to handleMessage, not a worker', async () => {
    const log: Seen[] = [];
    const admin: unknown[] = [];
    const pool = spawnPool(
      system.root,
      behavior(
        { workerProps: () => new Recorder(log) },
        { handleMessage: (_pool, message) => void admin.push(message) },
      ),
    );
    system.registry.get(pool).post(pool, entryOf('admin'), true);
    await until(() => admin.length === 1);
    expect(admin).to.deep.equal(['admin']);
    expect(log).to.have.length(0);
  });

  it('dead-letters sends to a cached pool PID once the pool stopped', async () => {
    const log: Seen[] = [];
    const pool = spawnPool(system.root, behavior({ workerProps: () => new Recorder(log) }));
    await system.root.request(pool, 'warm-up');
    const gone = system.root.watch(pool);
    system.root.stop(pool);
    await gone;
    const notFound = deadLetters(system, 'not-found');
    system.root.send(pool, 'too-late'); // `pool` still has the router cached: it must miss
    expect(notFound.map((e) => e.message)).to.deep.equal(['too-late']);
    expect(log.map((s) => s.message)).to.deep.equal(['warm-up']);
  });
});
