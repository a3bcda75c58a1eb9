import { WELL_KNOWN_FILE_OF, WELL_KNOWN_FILES } from '../runtime/well-known';
import { quote } from './names';

/*
 * A well-known file (google/protobuf/timestamp.proto...) named as a file to generate: real
 * trees vendor them beside their own protos, and `protoc $(find . -name '*.proto')` asks for
 * them. Their types already live in the runtime (every generated module uses those), so a
 * module declaring them again would fail as it loads (protobufjs: duplicate name). Its module
 * re-exports the runtime's types and codecs instead, the same from both commands.
 */

/** Whether `fileName` is one of the well-known files the runtime provides. */
export function isWellKnownFile(fileName: string): boolean {
  return WELL_KNOWN_FILES.includes(fileName);
}

/** The lines of the module for well-known file `fileName` (its header comes from the caller). */
export function emitWellKnownModule(fileName: string, runtimeModule: string): string[] {
  const base = fileName.slice('google/protobuf/'.length, -'.proto'.length);
  const names = Object.keys(WELL_KNOWN_FILE_OF).filter((n) => WELL_KNOWN_FILE_OF[n] === base);
  const lines = [
    `import { serialization as $serialization } from '@granary/core';`,
    `import * as $rt from ${quote(runtimeModule)};`,
    '',
    '// A well-known file: its types are those of the runtime, which every generated module uses.',
    `$rt.defineProtoFile($serialization, ${quote(fileName)}, {});`,
  ];
  for (const name of names) {
    const fullName = `google.protobuf.${name}`;
    lines.push('');
    if (name === 'NullValue') {
      lines.push(
        `/** Enum \`${fullName}\`. */`,
        `export { NullValue } from ${quote(runtimeModule)};`,
      );
      continue;
    }
    lines.push(
      `/** Message \`${fullName}\`. */`,
      `export type ${name} = $rt.${name};`,
      `/** Codec of \`${fullName}\`, registered with the serialization registry. */`,
      `export const ${name}: $rt.MessageCodec<$rt.${name}> = $rt.codecOf<$rt.${name}>(${quote(fullName)});`,
    );
  }
  return lines;
}
