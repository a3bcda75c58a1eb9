'use strict';
// The spec reporter, plus one JSON line per suite appended to $GRANARY_TEST_SUMMARY so the root
// test script can print one total for all packages.
const { appendFileSync } = require('node:fs');
const Spec = require('mocha/lib/reporters/spec');
const { EVENT_RUN_END } = require('mocha/lib/runner').constants;

class GranaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.GRANARY_TEST_SUMMARY;
      if (!file) return;
      const { passes, failures, pending } = this.stats;
      appendFileSync(
        file,
        JSON.stringify({ suite: process.env.npm_package_name, passes, failures, pending }) + '\n',
      );
    });
  }
}

module.exports = GranaryReporter;
