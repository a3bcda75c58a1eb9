#!/usr/bin/env node
'use strict';
// A pinger node, configured by GRANARY_* environment variables (see src/config.ts).
require('../dist/src/main').main('pinger');
