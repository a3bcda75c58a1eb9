#!/usr/bin/env node
'use strict';
// The demo runner (`npm run demo` at the repo root builds the example, then runs this).
require('../dist/src/demo/main').main();
