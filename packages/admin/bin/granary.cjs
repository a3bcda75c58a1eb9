#!/usr/bin/env node
'use strict';
// The granary CLI: see `granary help`. Compiled by `npm run build` (tsc -b) into dist/.
const { runCli } = require('../dist/src/cli/main.js');

const tty = process.stderr.isTTY;
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
