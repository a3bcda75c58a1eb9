import { connect } from 'node:net';

/** A decoded RESP2 reply: status/bulk strings, integers, arrays, null; errors become Error. */
export type RespValue = string | number | null | Error | RespValue[];

/** Longest a single command may take before it fails (the servers answer in microseconds). */
const COMMAND_TIMEOUT_MS = 2000;

/**
 * Sends one command to a Redis or Sentinel on 127.0.0.1 over a fresh socket and resolves with
 * its decoded reply (a server error reply resolves as an Error value). Enough for the fixtures'
 * probes and Sentinel queries without a client dependency in the testkit.
 */
export function respCommand(port: number, args: readonly (string | number)[]): Promise<RespValue> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buffer = Buffer.alloc(0);
    const fail = (err: Error): void => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(COMMAND_TIMEOUT_MS, () => fail(new Error(`no reply from :${port}`)));
    socket.once('error', fail);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      let parsed: ReturnType<typeof parse>;
      try {
        parsed = parse(buffer, 0);
      } catch (err) {
        fail(err as Error);
        return;
      }
      if (parsed === undefined) return;
      socket.destroy();
      resolve(parsed.value);
    });
    socket.once('connect', () => {
      let out = `*${args.length}\r\n`;
      for (const a of args) out += `$${Buffer.byteLength(String(a))}\r\n${String(a)}\r\n`;
      socket.write(out);
    });
  });
}

/** Parses one value at `at`; undefined when the buffer does not hold all of it yet. */
function parse(buf: Buffer, at: number): { value: RespValue; next: number } | undefined {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at]!);
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (type) {
    case '+':
      return { value: line, next };
    case '-':
      return { value: new Error(line), next };
    case ':':
      return { value: Number(line), next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, next };
      if (buf.length < next + length + 2) return undefined;
      return { value: buf.toString('utf8', next, next + length), next: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next };
      const items: RespValue[] = [];
      let pos = next;
      for (let i = 0; i < count; i++) {
        const item = parse(buf, pos);
        if (item === undefined) return undefined;
        items.push(item.value);
        pos = item.next;
      }
      return { value: items, next: pos };
    }
    default:
      throw new Error(`unexpected RESP type ${JSON.stringify(type)}`);
  }
}
