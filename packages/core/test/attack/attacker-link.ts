// The protocol as an attacker speaks it: raw Connect streams, a hand-made handshake, and
// frames built with core's own encoders (an attacker has the source too). Every answer the
// node gives is reported, so the suite can check each is a typed refusal.
import * as grpc from '@grpc/grpc-js';
import { PID } from '../../src/pid';
import { BatchBuilder } from '../../src/remote/internal/batch-builder';
import { newNonce, proofOf } from '../../src/remote/internal/handshake-proof';
import { decodeCredit } from '../../src/remote/internal/link-frames';
import type { OutboundEnvelope } from '../../src/remote/internal/outbound-envelope';
import {
  CONNECT_METHOD,
  PROTOCOL_VERSION,
  decodeFrame,
  encodeFrame,
} from '../../src/remote/internal/wire';
import type { WireFrame } from '../../src/remote/internal/wire';

/** One answer of the node, as the attacker saw it. */
export interface Answer {
  /** `status` (a gRPC status), `refusal` (a handshake ack), `reply` (an error reply), `http`. */
  kind: 'status' | 'refusal' | 'reply' | 'http';
  code: string;
  detail: string;
}

/** Where answers go (the attacker prints them). */
export type Report = (a: Answer) => void;

/** What the attacker knows: the node, and what it pretends to be. */
export interface Target {
  address: string;
  /** The shared secret, if the attacker has it (never, against a secured node). */
  secret?: string;
  /** A CA to verify the node with (TLS); no client certificate. */
  ca?: string;
}

const id = (b: Buffer): Buffer => b;
const NO_FRAMES: WireFrame[] = [];

/** A raw Connect stream that reports its end status and the frames the node sends. */
export class RawLink {
  readonly frames: WireFrame[] = [];
  readonly ended: Promise<grpc.StatusObject>;
  private readonly client: grpc.Client;
  readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  private waiter: (() => void) | undefined;
  private done = false;

  constructor(target: Target, report: Report) {
    const creds =
      target.ca === undefined
        ? grpc.credentials.createInsecure()
        : grpc.credentials.createSsl(Buffer.from(target.ca));
    this.client = new grpc.Client(target.address, creds, {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.max_receive_message_length': -1,
    });
    this.stream = this.client.makeBidiStreamRequest(CONNECT_METHOD, id, id);
    this.stream.on('data', (b: Buffer) => {
      if (decodeCredit(b) !== undefined) return;
      try {
        this.frames.push(decodeFrame(b));
      } catch {
        return;
      }
      this.waiter?.();
    });
    this.stream.on('error', () => undefined);
    this.ended = new Promise((resolve) =>
      this.stream.on('status', (s: grpc.StatusObject) => {
        this.done = true;
        this.waiter?.();
        if (s.code !== grpc.status.OK && s.code !== grpc.status.CANCELLED) {
          report({
            kind: 'status',
            code: grpc.status[s.code] ?? String(s.code),
            detail: s.details,
          });
        }
        resolve(s);
      }),
    );
  }

  send(frame: WireFrame | Buffer): void {
    if (!this.done) this.stream.write(Buffer.isBuffer(frame) ? frame : encodeFrame(frame));
  }

  /** The next frame, or undefined if the stream ended or `ms` passed first. */
  async next(ms = 3000): Promise<WireFrame | undefined> {
    const until = Date.now() + ms;
    while (this.frames.length === 0) {
      if (this.done || Date.now() > until) return undefined;
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 50);
      });
    }
    return this.frames.shift();
  }

  /** Takes every frame received so far. */
  drain(): WireFrame[] {
    return this.frames.length === 0 ? NO_FRAMES : this.frames.splice(0);
  }

  close(): void {
    this.stream.cancel();
    this.client.close();
  }
}

/**
 * Runs the client handshake (hello, challenge, proof), stating `address` and `memberId`;
 * resolves true when the node accepted. A refusing ack is reported.
 */
export async function handshake(
  link: RawLink,
  target: Target,
  report: Report,
  fields: { address: string; memberId: string; protocolVersion?: number },
): Promise<boolean> {
  const hello = {
    clusterName: 'attacked',
    memberId: fields.memberId,
    address: fields.address,
    protocolVersion: fields.protocolVersion ?? PROTOCOL_VERSION,
    nonce: newNonce(),
  };
  link.send({ handshake: hello });
  const first = await link.next();
  if (first?.handshakeAck) return refused(first, report);
  if (!first?.challenge) return false;
  const c = first.challenge;
  const proof = proofOf(target.secret ?? 'a guessed secret, wrong', 'client', {
    clusterName: hello.clusterName,
    clientNonce: hello.nonce,
    serverNonce: c.nonce,
    clientMemberId: hello.memberId,
    clientAddress: hello.address,
    serverMemberId: c.memberId,
    serverAddress: c.address,
  });
  link.send({ proof: { proof } });
  const ack = await link.next();
  return ack?.handshakeAck ? refused(ack, report) : false;
}

function refused(frame: WireFrame, report: Report): boolean {
  const ack = frame.handshakeAck!;
  if (!ack.accepted) report({ kind: 'refusal', code: ack.refusal, detail: ack.reason });
  return ack.accepted;
}

/** A batch frame of `envelopes` (defaults: JSON "hi" to `targetId`, no sender). */
export function batch(envelopes: Array<Partial<OutboundEnvelope>>): Buffer {
  const b = new BatchBuilder();
  for (const e of envelopes) {
    const env: OutboundEnvelope = {
      targetId: 'nobody',
      typeName: 'json',
      format: 1,
      payload: '"hi"',
      urgent: false,
      message: undefined,
      ...e,
    };
    if (typeof env.payload === 'string') env.payloadLength = Buffer.byteLength(env.payload);
    b.add(env);
  }
  return b.take();
}

/** A JSON payload of `value`, as an envelope field set. */
export function json(value: unknown): Pick<OutboundEnvelope, 'typeName' | 'format' | 'payload'> {
  return { typeName: 'json', format: 1, payload: JSON.stringify(value) };
}

/** A sender PID at `address` (a request's future there). */
export function sender(address: string, n: number): PID {
  return new PID(address, `f$${n}`);
}

/** Reports every error reply among the frames (their name and code). */
export function reportReplies(frames: WireFrame[], report: Report): number {
  let n = 0;
  for (const f of frames) {
    for (const env of f.batch?.envelopes ?? []) {
      n++;
      if (env.format !== 3) continue;
      try {
        const data = JSON.parse(Buffer.from(env.bytes.subarray(env.start, env.end)).toString()) as {
          name?: string;
          code?: string;
          message?: string;
        };
        report({ kind: 'reply', code: data.code ?? '', detail: `${data.name}: ${data.message}` });
      } catch {
        report({ kind: 'reply', code: '', detail: 'an error reply that is not JSON' });
      }
    }
  }
  return n;
}
