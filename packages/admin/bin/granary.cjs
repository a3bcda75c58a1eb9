#!/usr/bin/env node
'use strict';
// The granary CLI: see `granary help`. Compiled by `npm run build` (tsc -b) into dist/.
const { runCli } = require('../dist/src/cli/main.js');

const tty = process.stderr.isTTY;
// A reader that stopped early (`granary shards | head`) closed the pipe: stop quietly, as
// Unix tools do, instead of dying on the write's unhandled EPIPE with a stack trace.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});
runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  progress: (line) =>
    tty ? process.stderr.write(`\r\x1b[2K${line}`) : process.stderr.write(line + '\n'),
}).then(
  (code) => {
    if (tty) process.stderr.write('\r\x1b[2K');
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`granary: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 1;
  },
);
