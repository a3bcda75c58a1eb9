'use strict';
// Shared by every package: `mocha --config ../../.mocharc.cjs` from the package folder.
// Tests are compiled by `tsc -b` to dist/test, so mocha runs plain JavaScript with no loader.
module.exports = {
  spec: ['dist/test/**/*.test.js'],
  // A forgotten `.only` would silently run a fraction of the suite: fail instead.
  forbidOnly: true,
  // Node's own source-map support maps stack traces back to the .ts files.
  'node-option': ['enable-source-maps'],
  timeout: 30000,
  reporter: require.resolve('./scripts/mocha-reporter.cjs'),
  // The fixtures stop every server and node they start; `exit` is the last line of defence
  // so a leaked handle cannot hang CI (the leak still shows as a failing cleanup test).
  exit: true,
};
