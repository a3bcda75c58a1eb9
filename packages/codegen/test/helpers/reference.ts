import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Reader, Root } from 'protobufjs';
import type { Message, Type } from 'protobufjs';
import { PROTOC, PROTOS_DIR } from './paths';

/**
 * protobufjs loading test/protos files itself (default options, as a protobufjs user would):
 * the reference the generated codecs' bytes are compared with.
 */
export function referenceRoot(...files: string[]): Root {
  const root = new Root();
  root.resolvePath = (origin, target) => (origin === '' ? target : join(PROTOS_DIR, target));
  root.loadSync(files.map((f) => join(PROTOS_DIR, f)));
  root.resolveAll();
  return root;
}

/**
 * `object` as a protobufjs message of `type` (fromObject). protobufjs's bundled
 * google.protobuf.Any names its first field `type_url` (its other types are camelCase), so
 * `typeUrl` is renamed for it.
 */
export function referenceMessage(type: Type, object: object): Message {
  const renamed = JSON.parse(
    JSON.stringify(object, bytesAsArrays).replace(/"typeUrl":/g, '"type_url":'),
    bytesBack,
  ) as Record<string, unknown>;
  return type.fromObject(renamed);
}

/** protobufjs's own encoding of `object` as `type` (`referenceMessage`, then encode). */
export function referenceEncode(type: Type, object: object): Buffer {
  return Buffer.from(type.encode(referenceMessage(type, object)).finish());
}

/** JSON replacer/reviver pair that keep Uint8Arrays (and -0, infinities) through a copy. */
function bytesAsArrays(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: [...value] };
  if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0)))
    return { $number: Object.is(value, -0) ? '-0' : String(value) };
  return value;
}

function bytesBack(_key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && '$bytes' in value)
    return new Uint8Array((value as { $bytes: number[] }).$bytes);
  if (typeof value === 'object' && value !== null && '$number' in value)
    return Number((value as { $number: string }).$number);
  return value;
}

/** `protoc --decode=<typeName>` of `bytes` against `file` under test/protos: its text format. */
export function protocDecode(file: string, typeName: string, bytes: Uint8Array): string {
  const result = spawnSync(PROTOC, [`--decode=${typeName}`, `-I${PROTOS_DIR}`, file], {
    cwd: PROTOS_DIR,
    input: bytes,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`protoc --decode failed: ${result.stderr}`);
  return result.stdout;
}

/** `protoc --encode=<typeName>` of `text` (text format) against `file` under test/protos. */
export function protocEncode(file: string, typeName: string, text: string): Uint8Array {
  const result = spawnSync(PROTOC, [`--encode=${typeName}`, `-I${PROTOS_DIR}`, file], {
    cwd: PROTOS_DIR,
    input: text,
  });
  if (result.status !== 0) throw new Error(`protoc --encode failed: ${String(result.stderr)}`);
  return new Uint8Array(result.stdout);
}

/** The wire types of each top-level field number in `bytes` (2 = packed/length-delimited). */
export function wireTypes(bytes: Uint8Array): Map<number, Set<number>> {
  const reader = Reader.create(bytes);
  const out = new Map<number, Set<number>>();
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const [field, wire] = [tag >>> 3, tag & 7];
    out.set(field, (out.get(field) ?? new Set()).add(wire));
    reader.skipType(wire);
  }
  return out;
}
