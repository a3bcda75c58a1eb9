// The attacks of the attack suite, one function each: what a hostile process that can reach a
// node's port tries. Each returns once it is done (or after `holdMs` for those that hold
// resources), reporting every answer the node gave.
import { randomBytes } from 'node:crypto';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { Stop } from '../../src/messages';
import { encodeSystemMessage, SYSTEM_TYPE_NAME } from '../../src/remote/internal/system-codec';
import { PROTOCOL_VERSION, SYSTEM_FORMAT, WireTypes } from '../../src/remote/internal/wire';
import type { Report, Target } from './attacker-link';
import { RawLink, batch, handshake, json, reportReplies, sender } from './attacker-link';

/** What an attack knows besides the target. */
export interface AttackContext {
  target: Target;
  report: Report;
  /** The legitimate member: its address and member id (to impersonate). */
  victim: { address: string; memberId: string };
  /** How long attacks that hold resources hold them. */
  holdMs: number;
}

/** The attacker's own (fake) address and member id. */
const ME = { address: '127.0.0.1:1', memberId: 'attacker' };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A link that completed the handshake (undefined when refused: that answer is reported). */
async function authenticated(ctx: AttackContext, n = 0): Promise<RawLink | undefined> {
  const link = new RawLink(ctx.target, ctx.report);
  const who = { address: `127.0.0.1:${2 + n}`, memberId: `attacker-${n}` };
  if (await handshake(link, ctx.target, ctx.report, who)) return link;
  link.close();
  return undefined;
}

/** Sends `frames` on their own authenticated links, one each, and waits for each to end. */
async function onOwnLinks(ctx: AttackContext, frames: Buffer[]): Promise<void> {
  await Promise.all(
    frames.map(async (frame, i) => {
      const link = await authenticated(ctx, i);
      if (!link) return;
      link.send(frame);
      await Promise.race([link.ended, sleep(3000)]);
      link.close();
    }),
  );
}

function tcp(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i), Number(address.slice(i + 1))];
}

/** Random bytes on fresh TCP connections (no protocol at all). */
async function randomBytesAttack(ctx: AttackContext): Promise<void> {
  const [host, port] = tcp(ctx.target.address);
  await Promise.all(
    Array.from({ length: 20 }, () => {
      return new Promise<void>((resolve) => {
        const s = net.connect(port, host, () => s.end(randomBytes(64 * 1024)));
        s.on('error', () => resolve());
        s.on('close', () => resolve());
        s.resume();
      });
    }),
  );
}

/** HTTP/2 requests to paths and with content types that are not gRPC's Connect. */
async function wrongHttp2(ctx: AttackContext): Promise<void> {
  const scheme = ctx.target.ca === undefined ? 'http' : 'https';
  const session = http2.connect(`${scheme}://${ctx.target.address}`, {
    ca: ctx.target.ca,
    rejectUnauthorized: false,
  });
  session.on('error', () => undefined);
  const requests: Array<[string, string, string]> = [
    ['POST', '/granary.remote.Remoting/Nope', 'application/grpc'],
    ['POST', '/granary.remote.Remoting/Connect', 'text/html'],
    ['GET', '/', 'text/plain'],
    ['POST', '/../../etc/passwd', 'application/grpc+proto'],
  ];
  await Promise.all(
    requests.map(
      ([method, path, type]) =>
        new Promise<void>((resolve) => {
          const req = session.request({
            ':method': method,
            ':path': path,
            'content-type': type,
            te: 'trailers',
          });
          req.on('response', (headers) => {
            const grpcStatus = headers['grpc-status'];
            ctx.report({
              kind: 'http',
              code: String(headers[':status']),
              detail: `${path}: grpc-status ${grpcStatus ?? '-'} ${headers['grpc-message'] ?? ''}`,
            });
          });
          req.on('error', () => resolve());
          req.on('close', () => resolve());
          req.end(Buffer.from('not a grpc message'));
          req.resume();
        }),
    ),
  );
  session.close();
}

/** After the handshake: a corrupt frame, a truncated one, one pointing outside its tables. */
async function badFrames(ctx: AttackContext): Promise<void> {
  const good = batch([{ targetId: 'x' }, { targetId: 'y' }]);
  const outside = Buffer.from(good);
  // The last envelope's target index (its first field) made to point past the table.
  const at = outside.indexOf(Buffer.from([0x08, 0x01]));
  if (at > 0) outside[at + 1] = 0x7f;
  await onOwnLinks(ctx, [
    Buffer.from([0x1a, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff]),
    good.subarray(0, good.byteLength >> 1),
    outside,
    Buffer.from([0x0a, 0x80]),
  ]);
}

/** A gRPC message announcing 256 MiB, on a raw HTTP/2 stream, before any handshake. */
async function oversizeBefore(ctx: AttackContext): Promise<void> {
  const scheme = ctx.target.ca === undefined ? 'http' : 'https';
  const session = http2.connect(`${scheme}://${ctx.target.address}`, {
    ca: ctx.target.ca,
    rejectUnauthorized: false,
  });
  session.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    const req = session.request({
      ':method': 'POST',
      ':path': '/granary.remote.Remoting/Connect',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    req.on('trailers', (t) =>
      ctx.report({
        kind: 'status',
        code: `grpc ${t['grpc-status']}`,
        detail: String(t['grpc-message']),
      }),
    );
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(256 * 1024 * 1024, 1);
    req.write(prefix);
    const chunk = Buffer.alloc(1024 * 1024, 1);
    let sent = 0;
    const pump = (): void => {
      while (sent < 64 && req.write(chunk)) sent++;
      if (sent < 64) req.once('drain', pump);
      else req.end();
    };
    pump();
    req.resume();
    setTimeout(resolve, 5000);
  });
  session.close();
}

/** After the handshake: an 8 MiB frame, and a batch with a 512 KiB target id. */
async function oversizeAfter(ctx: AttackContext): Promise<void> {
  await onOwnLinks(ctx, [
    batch([
      { targetId: 'x', typeName: 'bytes', format: 0, payload: Buffer.alloc(8 * 1024 * 1024) },
    ]),
  ]);
}

async function hugeStrings(ctx: AttackContext): Promise<void> {
  await onOwnLinks(ctx, [
    batch([{ targetId: 't'.repeat(512 * 1024) }]),
    batch([{ targetId: 'x', typeName: 'y'.repeat(300 * 1024) }]),
    batch([
      { targetId: 'x', sender: sender(ME.address, 1), header: { k: 'v'.repeat(200 * 1024) } },
    ]),
  ]);
}

/** 2,000 TCP connections opened and held (no bytes, or an HTTP/2 preface and nothing more). */
async function connections(ctx: AttackContext): Promise<void> {
  const [host, port] = tcp(ctx.target.address);
  const sockets: net.Socket[] = [];
  for (let i = 0; i < 2000; i++) {
    const s = net.connect(port, host);
    s.on('error', () => undefined);
    s.resume();
    if (i % 2 === 0) s.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    sockets.push(s);
    if (i % 200 === 199) await sleep(10);
  }
  await sleep(ctx.holdMs);
  for (const s of sockets) s.destroy();
}

/** Requests whose replies it never reads: mirror calls of 16 KiB, as fast as it can write. */
async function neverReads(ctx: AttackContext): Promise<void> {
  const link = await authenticated(ctx);
  if (!link) return;
  link.stream.pause();
  const payload = Buffer.alloc(16 * 1024, 7);
  const end = Date.now() + ctx.holdMs;
  let n = 0;
  while (Date.now() < end) {
    const frame = batch(
      Array.from({ length: 16 }, () => ({
        targetId: `$g/mirror/m-${n % 50}`,
        typeName: 'bytes',
        format: 0,
        payload,
        sender: sender(ME.address, ++n),
      })),
    );
    link.send(frame);
    await sleep(5);
    if (await Promise.race([link.ended.then(() => true), sleep(0).then(() => false)])) break;
  }
  await Promise.race([link.ended, sleep(2000)]);
  link.close();
}

/** Requests to actors and kinds that do not exist, and a remote spawn of an unknown kind. */
async function missingTargets(ctx: AttackContext): Promise<void> {
  const link = await authenticated(ctx);
  if (!link) return;
  const spawn = WireTypes.SpawnRequest.encode({ kind: 'not-registered', name: 'x' }).finish();
  link.send(
    batch([
      { targetId: 'no-such-actor', sender: sender(ME.address, 1) },
      { targetId: '$g/no-such-kind/x', sender: sender(ME.address, 2) },
      { targetId: '$g/mirror', sender: sender(ME.address, 3) },
      {
        targetId: '$remote-activator',
        typeName: 'granary.remote.SpawnRequest',
        format: 2,
        payload: spawn,
        sender: sender(ME.address, 4),
      },
    ]),
  );
  await sleep(1000);
  reportReplies(link.drain(), ctx.report);
  link.close();
}

async function wrongVersion(ctx: AttackContext): Promise<void> {
  const link = new RawLink(ctx.target, ctx.report);
  await handshake(link, ctx.target, ctx.report, { ...ME, protocolVersion: PROTOCOL_VERSION + 7 });
  await Promise.race([link.ended, sleep(2000)]);
  link.close();
}

/** States the legitimate member's address, then its member id, then both. */
async function impersonate(ctx: AttackContext): Promise<void> {
  for (const who of [
    { address: ctx.victim.address, memberId: 'someone' },
    { address: '127.0.0.1:3', memberId: ctx.victim.memberId },
    ctx.victim,
  ]) {
    const link = new RawLink(ctx.target, ctx.report);
    if (await handshake(link, ctx.target, ctx.report, who)) {
      ctx.report({
        kind: 'status',
        code: 'ACCEPTED',
        detail: `accepted as ${JSON.stringify(who)}`,
      });
    }
    link.close();
  }
}

/** A Stop (system message) and a PoisonPill to each system actor. */
async function systemStop(ctx: AttackContext): Promise<void> {
  const link = await authenticated(ctx);
  if (!link) return;
  const stop = encodeSystemMessage(new Stop())!;
  const targets = ['$granary-seed', '$remote-activator', '$g/mirror'];
  link.send(
    batch(
      targets.flatMap((targetId) => [
        { targetId, typeName: SYSTEM_TYPE_NAME, format: SYSTEM_FORMAT, payload: stop },
        { targetId, typeName: 'granary.PoisonPill', format: 0, payload: new Uint8Array(0) },
      ]),
    ),
  );
  await sleep(500);
  link.close();
}

/** Seed-protocol requests that are malformed, or act on what is not the attacker's. */
async function seedMalformed(ctx: AttackContext): Promise<void> {
  const link = await authenticated(ctx);
  if (!link) return;
  const listener = { address: ME.address, id: '$1' };
  const bad: unknown[] = [
    {
      t: 'seed.join',
      cluster: 'attacked',
      id: 'evil',
      address: '127.0.0.1:2',
      kinds: 'mirror',
      status: 'up',
      listener,
    },
    {
      t: 'seed.join',
      cluster: 'attacked',
      id: 'evil',
      address: ctx.victim.address,
      kinds: ['mirror'],
      status: 'up',
      listener,
    },
    { t: 'seed.heartbeat', leaseId: 'x', version: -1 },
    { t: 'seed.claims', leaseId: 1, items: [['mirror', 1e12]] },
    { t: 'seed.releases', items: [['mirror', 0, 'now']] },
    { t: 'seed.leave', leaseId: Number.MAX_SAFE_INTEGER },
    { t: 'seed.status', leaseId: 1, status: 'dead' },
    { t: 'seed.whatever' },
  ];
  link.send(
    batch(
      bad.map((m, i) => ({
        targetId: '$granary-seed',
        ...json(m),
        sender: sender('127.0.0.1:2', i + 1),
      })),
    ),
  );
  await sleep(1000);
  reportReplies(link.drain(), ctx.report);
  link.close();
}

/** 2,000 requests, each naming a different sender address (the replies are read). */
async function senderAddresses(ctx: AttackContext): Promise<void> {
  const link = await authenticated(ctx);
  if (!link) return;
  for (let i = 0; i < 2000; i += 250) {
    link.send(
      batch(
        Array.from({ length: 250 }, (_, j) => ({
          targetId: 'no-such-actor',
          sender: sender(`10.${(i + j) >> 16}.${((i + j) >> 8) & 255}.${(i + j) & 255}:7`, i + j),
        })),
      ),
    );
    await sleep(20);
  }
  await sleep(1000);
  reportReplies(link.drain(), ctx.report);
  link.close();
}

/** Every attack by name. */
export const ATTACKS: Record<string, (ctx: AttackContext) => Promise<void>> = {
  'random bytes': randomBytesAttack,
  'wrong HTTP/2 paths and content types': wrongHttp2,
  'malformed, truncated and out-of-table frames': badFrames,
  'oversize message before the handshake': oversizeBefore,
  'oversize message after the handshake': oversizeAfter,
  'huge table strings': hugeStrings,
  '2,000 connections': connections,
  'a peer that never reads': neverReads,
  'missing actors and kinds, spawn of an unregistered kind': missingTargets,
  'wrong protocol version': wrongVersion,
  "impersonating a member's address and member id": impersonate,
  'a system Stop to each system actor': systemStop,
  'malformed seed-protocol messages': seedMalformed,
  'requests naming 2,000 sender addresses': senderAddresses,
};
