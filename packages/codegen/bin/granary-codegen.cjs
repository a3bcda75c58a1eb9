#!/usr/bin/env node
'use strict';
// granary-codegen <file.proto...> --out <dir> [-I <dir>]: same output as protoc-gen-granary, no protoc.
require('../dist/src/cli/main').main();
