#!/usr/bin/env node
'use strict';
// A ponger node, configured by GRANARY_* environment variables (see src/config.ts).
require('../dist/src/main').main('ponger');
