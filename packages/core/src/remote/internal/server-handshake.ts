import type { PeerCertificate } from 'node:tls';
import type { HandshakeRefusal } from '../../errors';
import { NONCE_BYTES, newNonce, proofOf, verifyProof, type Transcript } from './handshake-proof';
import { certificateCovers, identityProblem, MAX_IDENTITY_BYTES } from './peer-identity';
import type { WireFrame, WireHandshake } from './wire';
import { PROTOCOL_VERSION } from './wire';

/** What the server side of a handshake needs from its node. */
export interface ServerHandshakeHost {
  readonly clusterName: string;
  /** The shared secret the client must prove; undefined: no proof asked. */
  readonly secret: string | undefined;
  /** Mutual TLS: the client's certificate must cover the address or member id it states. */
  readonly verifyCertificates: boolean;
  /** This node's member id and advertised address. */
  readonly memberId: string;
  readonly address: string;
  /** True while another live authenticated link states this address or member id. */
  isHeld(address: string, memberId: string): boolean;
}

/** Where a handshake stands after a frame. */
export type HandshakeOutcome =
  | { kind: 'pending' }
  | { kind: 'accepted'; memberId: string; address: string }
  | {
      kind: 'refused';
      refusal: HandshakeRefusal;
      reason: string;
      memberId?: string | undefined;
      address?: string | undefined;
    };

/** One handshake step: the frame to write back (if any) and the outcome. */
export interface HandshakeStep {
  reply?: WireFrame;
  outcome: HandshakeOutcome;
}

const PENDING: HandshakeOutcome = { kind: 'pending' };

/**
 * The server side of one link's handshake (remote.proto has the exchange):
 *
 * ```
 *  hello ──Handshake ok──▶ proof ──Proof ok──▶ accepted
 *    │ refused               │ refused
 *    └──────────────────────▶┴──▶ refused (HandshakeAck with the reason; the link closes)
 * ```
 *
 * Pure logic: the caller writes the reply frames and closes the link on a refusal.
 */
export class ServerHandshake {
  private hello: WireHandshake | undefined = undefined;
  private transcript: Transcript | undefined = undefined;

  constructor(
    private readonly host: ServerHandshakeHost,
    /** The client's TLS certificate, when the connection has one. */
    private readonly peerCertificate: () => PeerCertificate | undefined,
  ) {}

  /** Handles the next frame of the client. */
  step(frame: WireFrame): HandshakeStep {
    if (this.transcript === undefined) return this.onHello(frame);
    return this.onProof(frame);
  }

  private onHello(frame: WireFrame): HandshakeStep {
    const hs = frame.handshake;
    if (!hs) return this.refuse('malformed', 'the first frame must be a handshake');
    this.hello = hs;
    if (hs.protocolVersion !== PROTOCOL_VERSION) {
      return this.refuse(
        'protocol-version',
        `protocol version ${hs.protocolVersion} is not supported (this node speaks ${PROTOCOL_VERSION})`,
      );
    }
    if (hs.clusterName !== this.host.clusterName) {
      const stated =
        Buffer.byteLength(hs.clusterName) > MAX_IDENTITY_BYTES ? '(too long)' : hs.clusterName;
      return this.refuse(
        'cluster-name',
        `cluster name '${stated}' does not match '${this.host.clusterName}' (clusterName)`,
      );
    }
    const problem = identityProblem(hs.memberId, hs.address);
    if (problem !== undefined) return this.refuse('malformed', problem);
    if (hs.nonce.byteLength !== NONCE_BYTES) {
      return this.refuse('malformed', `the nonce must be ${NONCE_BYTES} bytes`);
    }
    if (this.host.verifyCertificates) {
      const cert = this.peerCertificate();
      if (cert === undefined || !certificateCovers(cert, hs.address, hs.memberId)) {
        return this.refuse(
          'certificate',
          `the client certificate covers neither the host of ${hs.address} nor member id '${hs.memberId}' (tls)`,
        );
      }
    }
    const serverNonce = newNonce();
    this.transcript = {
      clusterName: hs.clusterName,
      clientNonce: hs.nonce,
      serverNonce,
      clientMemberId: hs.memberId,
      clientAddress: hs.address,
      serverMemberId: this.host.memberId,
      serverAddress: this.host.address,
    };
    return {
      reply: {
        challenge: { nonce: serverNonce, memberId: this.host.memberId, address: this.host.address },
      },
      outcome: PENDING,
    };
  }

  private onProof(frame: WireFrame): HandshakeStep {
    const t = this.transcript!;
    const proof = frame.proof;
    if (!proof) return this.refuse('malformed', 'expected the proof frame');
    if (!verifyProof(this.host.secret, 'client', t, proof.proof)) {
      return this.refuse('authentication', 'the peer did not prove the shared secret (secret)');
    }
    if (this.host.isHeld(t.clientAddress, t.clientMemberId)) {
      return this.refuse(
        'duplicate',
        `another live link already states address ${t.clientAddress} or member id '${t.clientMemberId}'`,
      );
    }
    return {
      reply: {
        handshakeAck: {
          accepted: true,
          reason: '',
          refusal: '',
          memberId: this.host.memberId,
          address: this.host.address,
          proof: proofOf(this.host.secret, 'server', t),
        },
      },
      outcome: { kind: 'accepted', memberId: t.clientMemberId, address: t.clientAddress },
    };
  }

  private refuse(refusal: HandshakeRefusal, reason: string): HandshakeStep {
    const hs = this.hello;
    return {
      reply: {
        handshakeAck: {
          accepted: false,
          reason,
          refusal,
          memberId: '',
          address: '',
          proof: new Uint8Array(0),
        },
      },
      outcome: {
        kind: 'refused',
        refusal,
        reason,
        memberId: hs && clipped(hs.memberId),
        address: hs && clipped(hs.address),
      },
    };
  }
}

/** A stated string as it may appear in a log line (an attacker's 1 MiB id is not logged). */
function clipped(value: string): string {
  return value.length > 128 ? `${value.slice(0, 128)}...` : value;
}
