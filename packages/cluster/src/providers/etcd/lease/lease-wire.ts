/**
 * The few etcd v3 messages the lease thread sends and reads, encoded by hand (protobuf wire
 * format: a tag byte, then a varint or a length-delimited value). Three tiny messages do not
 * justify loading a .proto in every worker thread; field numbers are those of etcd's rpc.proto.
 *
 *   LeaseKeepAliveRequest { int64 ID = 1 }     LeaseKeepAliveResponse { header = 1; ID = 2; TTL = 3 }
 *   LeaseRevokeRequest    { int64 ID = 1 }     AuthenticateRequest { string name = 1; password = 2 }
 *   AuthenticateResponse  { header = 1; string token = 2 }
 */

/** gRPC method paths of the etcd services the lease thread calls. */
export const LEASE_KEEP_ALIVE = '/etcdserverpb.Lease/LeaseKeepAlive';
export const LEASE_REVOKE = '/etcdserverpb.Lease/LeaseRevoke';
export const AUTHENTICATE = '/etcdserverpb.Auth/Authenticate';

/** Wire type of a varint field. */
const VARINT = 0;
/** Wire type of a length-delimited field. */
const LEN = 2;

function pushVarint(out: number[], value: bigint): void {
  let v = BigInt.asUintN(64, value);
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
}

/** Encodes a message whose only field is `int64 ID = 1` (keep-alive and revoke requests). */
export function encodeLeaseId(id: string): Buffer {
  const out: number[] = [(1 << 3) | VARINT];
  pushVarint(out, BigInt(id));
  return Buffer.from(out);
}

/** Encodes an AuthenticateRequest. */
export function encodeAuthenticate(name: string, password: string): Buffer {
  const parts: number[] = [];
  for (const [field, text] of [
    [1, name],
    [2, password],
  ] as const) {
    const bytes = Buffer.from(text);
    parts.push((field << 3) | LEN);
    pushVarint(parts, BigInt(bytes.length));
    parts.push(...bytes);
  }
  return Buffer.from(parts);
}

/** Reads the fields of a message: varints as bigint, length-delimited as Buffer. */
function readFields(buf: Buffer): Map<number, bigint | Buffer> {
  const fields = new Map<number, bigint | Buffer>();
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const type = tag & 7;
    if (type === VARINT) fields.set(field, varint());
    else if (type === LEN) {
      const len = Number(varint());
      fields.set(field, buf.subarray(pos, pos + len));
      pos += len;
    } else if (type === 1) pos += 8;
    else if (type === 5) pos += 4;
    else throw new Error(`unsupported wire type ${type}`);
  }
  return fields;
}

/** A decoded LeaseKeepAliveResponse: the lease id and its remaining TTL (<= 0: gone). */
export interface KeepAliveReply {
  id: string;
  ttl: number;
}

/** Decodes a LeaseKeepAliveResponse. */
export function decodeKeepAlive(buf: Buffer): KeepAliveReply {
  const f = readFields(buf);
  const id = f.get(2);
  const ttl = f.get(3);
  return {
    id: typeof id === 'bigint' ? BigInt.asIntN(64, id).toString() : '0',
    ttl: typeof ttl === 'bigint' ? Number(BigInt.asIntN(64, ttl)) : 0,
  };
}

/** Decodes the token of an AuthenticateResponse. */
export function decodeAuthToken(buf: Buffer): string {
  const token = readFields(buf).get(2);
  return Buffer.isBuffer(token) ? token.toString() : '';
}
