import { expect } from 'chai';
import { kind } from '../../src/grains/kind';
import type { LoadShedder } from '../../src/overload/load-shedder';
import { MemoryNodes } from '../grains/memory-nodes';

describe('readiness while shedding load', () => {
  const nodes = new MemoryNodes(() => [kind('echo', () => ({ receive: (ctx) => ctx.message }))]);
  after(() => nodes.stopAll());

  it('reports not ready, naming the overload, while the member sheds', async () => {
    const c = await nodes.add();
    expect(c.readiness().ok).to.equal(true);
    const load = (c as unknown as { load: LoadShedder }).load;
    load.shedding = true;
    expect(c.isOverloaded()).to.equal(true);
    const report = c.readiness();
    expect(report.ok).to.equal(false);
    expect(report.checks.overload).to.contain('shedding load');
    load.shedding = false;
    expect(c.readiness().ok).to.equal(true);
  });
});
