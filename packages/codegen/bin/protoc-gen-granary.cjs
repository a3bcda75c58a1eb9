#!/usr/bin/env node
'use strict';
// protoc plugin: protoc --plugin=protoc-gen-granary=<this file> --granary_out=<dir> file.proto
require('../dist/src/plugin/main').main();
