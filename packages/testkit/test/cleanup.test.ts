import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../src/index';

interface Started {
  pids: number[];
  dirs: string[];
}

/** Runs the fixture child, waits for its JSON line, sends it `signal`, returns what it started. */
async function startThenSignal(signal: NodeJS.Signals): Promise<Started> {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'start-and-wait.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = await new Promise<Started>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n')[0];
      if (buffer.includes('\n')) resolve(JSON.parse(line!) as Started);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
  });
  for (const pid of started.pids) expect(isAlive(pid)).to.equal(true);
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
  return started;
}

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('cleanup', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGKILL'] as const) {
    it(`leaves no server process or temp dir when the test process gets ${signal}`, async () => {
      const started = await startThenSignal(signal);
      await eventually(() => started.pids.every((pid) => !isAlive(pid)));
      await eventually(() => started.dirs.every((dir) => !existsSync(dir)));
    });
  }
});
