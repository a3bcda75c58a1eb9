import { accessSync, statSync } from 'node:fs';
import * as protobuf from 'protobufjs';
import { adminFetch, type Target } from './admin-client';
import { CliExit, EXIT } from './exit-codes';
import { checkJson } from './json-request';
import type { Output } from './commands';

/** Largest .proto file `call` loads (the largest real ones are a few hundred KiB). */
const MAX_PROTO_BYTES = 16 * 1024 * 1024;

/**
 * `granary call <kind> <id> <Method> --json '{…}' --proto <file>`: encodes the request from
 * JSON with only the .proto (the kind is the service's full name, as generated kinds are
 * named), calls the grain through the admin API, and decodes the reply to JSON (64-bit
 * integers as strings, bytes as base64, enums by name).
 */
export async function call(
  t: Target,
  kind: string,
  id: string,
  methodName: string,
  json: string,
  protoFiles: string[],
  includes: string[],
  idempotent: boolean,
): Promise<Output> {
  const root = await loadProtos(protoFiles, includes);
  const service = root.lookup(kind);
  if (!(service instanceof protobuf.Service)) {
    const services = listServices(root).join(', ') || 'none';
    throw new CliExit(
      EXIT.notFound,
      `no service ${kind} in ${protoFiles.join(', ')} (services: ${services})`,
    );
  }
  const method = service.methods[methodName];
  if (method === undefined) {
    throw new CliExit(
      EXIT.notFound,
      `service ${kind} has no method ${methodName} (methods: ${Object.keys(service.methods).join(', ')})`,
    );
  }
  if (method.requestStream || method.responseStream) {
    throw new CliExit(
      EXIT.usage,
      `${kind}/${methodName} is a streaming rpc; grains serve unary rpcs only`,
    );
  }
  method.resolve();
  const requestType = method.resolvedRequestType!;
  const responseType = method.resolvedResponseType!;
  let object: unknown;
  try {
    object = JSON.parse(json);
  } catch {
    throw new CliExit(EXIT.usage, '--json is not valid JSON');
  }
  let bytes: Uint8Array;
  try {
    bytes = requestType.encode(requestType.fromObject(checkJson(requestType, object))).finish();
  } catch (err) {
    throw new CliExit(
      EXIT.usage,
      `--json does not fit ${requestType.fullName.slice(1)}: ${(err as Error).message}`,
    );
  }
  const path = `${service.fullName.slice(1)}/${methodName}`;
  const r = await adminFetch<{ payload: string }>(t, 'v1/call', {
    kind,
    id,
    method: path,
    payload: Buffer.from(bytes).toString('base64'),
    timeoutMs: t.timeoutMs,
    idempotent,
  });
  const reply = responseType.toObject(responseType.decode(Buffer.from(r.payload, 'base64')), {
    longs: String,
    enums: String,
    bytes: String,
    defaults: true,
  });
  return { json: reply, text: JSON.stringify(reply, null, 2) + '\n', notAnswering: [] };
}

async function loadProtos(files: string[], includes: string[]): Promise<protobuf.Root> {
  if (files.length === 0) throw new CliExit(EXIT.usage, 'call needs --proto <file>');
  // protobufjs reads a file whole: /dev/zero, a FIFO or a directory would hang it or worse.
  for (const file of files) {
    let what: string | undefined;
    try {
      const st = statSync(file);
      if (!st.isFile()) what = 'is not a regular file';
      else if (st.size > MAX_PROTO_BYTES) what = `is over ${MAX_PROTO_BYTES} bytes`;
    } catch (err) {
      what = `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
    }
    if (what !== undefined) throw new CliExit(EXIT.usage, `--proto ${file} ${what}`);
  }
  const root = new protobuf.Root();
  const original = root.resolvePath.bind(root);
  root.resolvePath = (origin, target) => {
    for (const dir of includes) {
      const candidate = `${dir.replace(/\/$/, '')}/${target}`;
      try {
        accessSync(candidate);
        return candidate;
      } catch {
        // next include directory
      }
    }
    return original(origin, target);
  };
  try {
    await root.load(files, { keepCase: false });
    root.resolveAll();
  } catch (err) {
    throw new CliExit(EXIT.usage, `cannot load ${files.join(', ')}: ${(err as Error).message}`);
  }
  return root;
}

function listServices(ns: protobuf.NamespaceBase): string[] {
  const out: string[] = [];
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Service) out.push(nested.fullName.slice(1));
    else if (nested instanceof protobuf.Namespace) out.push(...listServices(nested));
  }
  return out;
}
