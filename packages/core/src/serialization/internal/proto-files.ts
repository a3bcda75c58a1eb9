import * as path from 'node:path';
import * as protobuf from 'protobufjs';

/**
 * Folder of the package's .proto files (the source of truth for the wire format). Compiled code
 * lives in dist/src/<area>/internal, so the folder is four levels up from here.
 */
export const PROTO_DIR = path.join(__dirname, '..', '..', '..', '..', 'proto');

/** Loads one of the package's .proto files into a fresh, fully resolved Root. */
export function loadProto(fileName: string): protobuf.Root {
  const root = new protobuf.Root().loadSync(path.join(PROTO_DIR, fileName));
  root.resolveAll();
  return root;
}
