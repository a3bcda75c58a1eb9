import { expect } from 'chai';
import { ActorSystem, DeadLetterEvent, PID, Props, Stopped, silentLogger } from '../src/index';
import { spawnUnlisted } from '../src/internal';

describe('spawnUnlisted: an actor its owner indexes, not the registry', () => {
  let system: ActorSystem;
  beforeEach(() => {
    system = new ActorSystem({ logger: silentLogger, shutdownTimeoutMs: 2_000 });
  });
  afterEach(() => system.shutdown());

  const echo = (seen: unknown[]) =>
    Props.fromFunc((ctx) => {
      seen.push(ctx.message);
      if (typeof ctx.message === 'number') ctx.respond(ctx.message + 1);
    });

  it('answers through its PID and is not listed: its id finds nothing, the registry does not grow', async () => {
    const before = system.registry.size;
    const proc = spawnUnlisted(system, echo([]));
    expect(await system.root.request(proc.self, 41)).to.equal(42);
    expect(system.registry.getLocal(proc.self.id)).to.equal(undefined);
    expect(system.registry.size).to.equal(before);
    // A PID made again from the address and id does not reach it (nothing lists it).
    const again = new PID(proc.self.address, proc.self.id);
    const dead = new Promise<DeadLetterEvent>((resolve) =>
      system.eventStream.subscribe(DeadLetterEvent, resolve),
    );
    system.root.send(again, 'lost');
    expect((await dead).message).to.equal('lost');
  });

  it('runs its lifecycle: Started first, Stopped when stopped; later sends are dead letters', async () => {
    const seen: unknown[] = [];
    const proc = spawnUnlisted(system, echo(seen));
    expect(await system.root.request(proc.self, 1)).to.equal(2);
    system.root.stop(proc.self);
    await waitFor(() => proc.dead);
    expect(seen[0]!.constructor.name).to.equal('Started');
    expect(seen.some((m) => m instanceof Stopped)).to.equal(true);
    const dead = new Promise<DeadLetterEvent>((resolve) =>
      system.eventStream.subscribe(DeadLetterEvent, resolve),
    );
    system.root.send(proc.self, 'late');
    expect((await dead).message).to.equal('late');
  });

  it('is not a top-level actor: shutdown does not wait for it', async () => {
    spawnUnlisted(system, echo([]));
    const t0 = Date.now();
    await system.shutdown();
    // With it counted, shutdown would wait shutdownTimeoutMs (2 s) for an actor it cannot find.
    expect(Date.now() - t0).to.be.below(1_000);
  });

  it('ending does not count as a top-level actor ending: shutdown still waits for the listed ones', async () => {
    const gone = spawnUnlisted(system, echo([]));
    system.root.stop(gone.self);
    await waitFor(() => gone.dead);
    const seen: unknown[] = [];
    system.root.spawn(echo(seen));
    const t0 = Date.now();
    await system.shutdown();
    expect(
      seen.some((m) => m instanceof Stopped),
      'the listed actor was stopped',
    ).to.equal(true);
    // Miscounted, the listed actor's end would not be the last one and shutdown would time out.
    expect(Date.now() - t0).to.be.below(1_000);
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond(), 'condition not reached within 1 s').to.equal(true);
}
