#!/usr/bin/env node
'use strict';
// The demo's private redis-server: runs it with the given arguments and stops it when the demo
// runner goes, even a SIGKILLed one (this process's stdin is a pipe from the runner).
const { spawn } = require('node:child_process');

const server = spawn('redis-server', process.argv.slice(2), {
  stdio: ['ignore', 'ignore', 'inherit'],
});
server.on('error', (err) => {
  process.stderr.write(
    `redis-server: ${err.code === 'ENOENT' ? 'not found on PATH' : err.message}\n`,
  );
  process.exit(127);
});
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
const stop = () => server.kill('SIGTERM');
process.on('SIGTERM', stop);
process.on('SIGINT', () => undefined); // the runner stops it after the nodes
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
