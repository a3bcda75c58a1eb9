import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ActorSystem, Props, silentLogger } from '../src/index';
import { retainRuntimeShapes } from '../src/internal';

/** Bound on the child process: it should exit as soon as its script is done. */
const CHILD_TIMEOUT_MS = 20_000;

describe('retainRuntimeShapes (shape anchor)', () => {
  it('lets a process that used and shut down a system exit by itself (no timer, no handle)', async () => {
    const core = join(__dirname, '..', 'src', 'index.js');
    const internal = join(__dirname, '..', 'src', 'internal.js');
    const script = `
      const { ActorSystem, Props, silentLogger } = require(${JSON.stringify(core)});
      require(${JSON.stringify(internal)}).retainRuntimeShapes();
      (async () => {
        const system = new ActorSystem({ logger: silentLogger });
        const pid = system.root.spawn(Props.fromFunc((ctx) => ctx.respond(ctx.message)));
        await system.root.request(pid, 1);
        await system.shutdown();
        process.stdout.write('done');
      })();`;
    const started = Date.now();
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['-e', script],
        { timeout: CHILD_TIMEOUT_MS },
        (error, stdout) => resolve({ code: error ? (child.exitCode ?? -1) : 0, stdout }),
      );
    });
    expect(out.stdout).to.equal('done');
    expect(out.code, 'exit code (killed at the timeout if something kept it alive)').to.equal(0);
    expect(Date.now() - started).to.be.below(CHILD_TIMEOUT_MS);
  });

  it('stays out of the systems it anchors for: a new system holds only its own processes', async () => {
    retainRuntimeShapes();
    const a = new ActorSystem({ logger: silentLogger });
    const b = new ActorSystem({ logger: silentLogger });
    try {
      expect(a.registry.size).to.equal(0);
      expect(b.registry.size).to.equal(0);
      const pid = b.root.spawn(Props.fromFunc(() => {}));
      expect(b.registry.size).to.equal(1);
      expect(a.registry.size).to.equal(0);
      expect(pid.id).to.equal('$1');
    } finally {
      await a.shutdown();
      await b.shutdown();
    }
  });
});
