import { join } from 'node:path';
import { expect } from 'chai';
import { isAlive } from '@granary/testkit';
import { ChildNode } from '../src/demo/child-node';
import type { NodeLine } from '../src/demo/child-node';

const STUBBORN = join(__dirname, 'fixtures', 'stubborn-node.js');

function start(env: Record<string, string>, lines: NodeLine[]): ChildNode {
  return new ChildNode({
    name: 'n1',
    role: 'ponger',
    script: STUBBORN,
    cwd: __dirname,
    env,
    onLine: (l) => lines.push(l),
  });
}

async function untilLine(lines: NodeLine[], text: string): Promise<void> {
  while (!lines.some((l) => l.text === text)) await new Promise((r) => setTimeout(r, 10));
}

describe('ChildNode', () => {
  const nodes: ChildNode[] = [];

  afterEach(() => {
    for (const n of nodes.splice(0)) n.kill();
  });

  it('reports stdout and stderr lines with their stream and node', async () => {
    const lines: NodeLine[] = [];
    const node = start({}, lines);
    nodes.push(node);
    await untilLine(lines, 'an error line');
    await untilLine(lines, 'ready');
    expect(lines.find((l) => l.text === 'ready')?.stream).to.equal('stdout');
    expect(lines.find((l) => l.text === 'an error line')?.stream).to.equal('stderr');
    expect(lines.every((l) => l.node === node)).to.equal(true);
  });

  it('stop() ends a node that exits on SIGTERM without forcing it', async () => {
    const lines: NodeLine[] = [];
    const node = start({}, lines);
    nodes.push(node);
    await untilLine(lines, 'ready');
    const exit = await node.stop();
    expect(exit).to.deep.equal({ code: 0, signal: null, forced: false });
    expect(node.running).to.equal(false);
  });

  it('stop() SIGKILLs a node still running after the grace period', async () => {
    const lines: NodeLine[] = [];
    const node = start({ STUBBORN: '1' }, lines);
    nodes.push(node);
    await untilLine(lines, 'ready');
    const exit = await node.stop(300);
    expect(lines.map((l) => l.text)).to.include('ignoring SIGTERM');
    expect(exit).to.deep.equal({ code: null, signal: 'SIGKILL', forced: true });
    expect(isAlive(node.pid ?? -1)).to.equal(false);
  });

  it('kill() marks the node as killed on purpose', async () => {
    const lines: NodeLine[] = [];
    const node = start({}, lines);
    nodes.push(node);
    await untilLine(lines, 'ready');
    node.kill();
    expect(node.killedOnPurpose).to.equal(true);
    expect(await node.exited).to.deep.equal({ code: null, signal: 'SIGKILL' });
  });
});
