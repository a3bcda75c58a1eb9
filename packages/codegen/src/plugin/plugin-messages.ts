import { readFileSync } from 'node:fs';
import { Root } from 'protobufjs';
import type { INamespace, Type } from 'protobufjs';

/**
 * CodeGeneratorRequest / CodeGeneratorResponse from the descriptor.proto and plugin.proto
 * that ship with protobufjs (as JSON), so the plugin needs no .proto or protoc headers.
 */
export interface PluginMessages {
  readonly request: Type;
  readonly response: Type;
}

let cached: PluginMessages | undefined;

function loadJson(path: string): INamespace {
  return JSON.parse(readFileSync(require.resolve(path), 'utf8')) as INamespace;
}

/** The two plugin message types, loaded once. */
export function pluginMessages(): PluginMessages {
  if (cached === undefined) {
    const root = new Root()
      .addJSON(loadJson('protobufjs/google/protobuf/descriptor.json').nested ?? {})
      .addJSON(loadJson('protobufjs/google/protobuf/compiler/plugin.json').nested ?? {});
    root.resolveAll();
    cached = {
      request: root.lookupType('google.protobuf.compiler.CodeGeneratorRequest'),
      response: root.lookupType('google.protobuf.compiler.CodeGeneratorResponse'),
    };
  }
  return cached;
}
