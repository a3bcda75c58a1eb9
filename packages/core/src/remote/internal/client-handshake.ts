import { HandshakeError, type HandshakeRefusal } from '../../errors';
import { newNonce, proofOf, verifyProof, type Transcript } from './handshake-proof';
import type { WireFrame, WireHandshake } from './wire';
import { PROTOCOL_VERSION } from './wire';

/** Where a client handshake stands after a frame. */
export type ClientHandshakeStep =
  | { kind: 'pending'; reply: WireFrame }
  | { kind: 'accepted'; memberId: string }
  | { kind: 'refused'; error: HandshakeError };

const KNOWN_REFUSALS = new Set<string>([
  'protocol-version',
  'cluster-name',
  'malformed',
  'authentication',
  'certificate',
  'duplicate',
  'shutdown',
  'timeout',
]);

/**
 * The client side of one link's handshake (remote.proto has the exchange): sends `hello`,
 * answers the server's Challenge with its proof, and accepts the server's Ack only if the
 * server proved the secret too and is the node that was dialled (it states that address).
 *
 * ```
 *  challenge ──Challenge ok──▶ ack ──Ack accepted, proof ok──▶ accepted
 *      │ refusing Ack / bad       │ refused / bad proof
 *      └─────────────────────────▶┴──▶ refused (HandshakeError)
 * ```
 */
export class ClientHandshake {
  /** The first frame to write. */
  readonly hello: WireHandshake;
  private transcript: Transcript | undefined = undefined;

  constructor(
    self: { clusterName: string; memberId: string; address: string },
    private readonly secret: string | undefined,
    /** The address this link dialled: the server must state it. */
    private readonly dialled: string,
  ) {
    this.hello = {
      clusterName: self.clusterName,
      memberId: self.memberId,
      address: self.address,
      protocolVersion: PROTOCOL_VERSION,
      nonce: newNonce(),
    };
  }

  /** Handles the next frame of the server. */
  step(frame: WireFrame): ClientHandshakeStep {
    const ack = frame.handshakeAck;
    if (ack && !ack.accepted) {
      const refusal = KNOWN_REFUSALS.has(ack.refusal)
        ? (ack.refusal as HandshakeRefusal)
        : 'malformed';
      // The peer's reason speaks of us as "the peer": said from this side, a user read it as
      // the server lacking the secret.
      const reason =
        refusal === 'authentication'
          ? `it did not accept our proof of the shared secret (secret: ours is missing or not the one it has)`
          : ack.reason || 'no reason given';
      return this.refused(refusal, reason, true);
    }
    if (this.transcript === undefined) return this.onChallenge(frame);
    if (!ack) return this.refused('malformed', 'expected the handshake ack');
    if (!verifyProof(this.secret, 'server', this.transcript, ack.proof)) {
      return this.refused('authentication', 'the peer did not prove the shared secret (secret)');
    }
    return { kind: 'accepted', memberId: this.transcript.serverMemberId };
  }

  private onChallenge(frame: WireFrame): ClientHandshakeStep {
    const c = frame.challenge;
    if (!c) return this.refused('malformed', 'expected the challenge');
    if (c.address !== this.dialled) {
      return this.refused(
        'malformed',
        `the node at ${this.dialled} states address ${c.address} (advertisedHost)`,
      );
    }
    const hello = this.hello;
    this.transcript = {
      clusterName: hello.clusterName,
      clientNonce: hello.nonce,
      serverNonce: c.nonce,
      clientMemberId: hello.memberId,
      clientAddress: hello.address,
      serverMemberId: c.memberId,
      serverAddress: c.address,
    };
    return {
      kind: 'pending',
      reply: { proof: { proof: proofOf(this.secret, 'client', this.transcript) } },
    };
  }

  private refused(refusal: HandshakeRefusal, reason: string, byPeer = false): ClientHandshakeStep {
    const message = byPeer
      ? `${this.dialled} refused our handshake: ${reason}`
      : `handshake with ${this.dialled} failed: ${reason}`;
    return { kind: 'refused', error: new HandshakeError(message, { refusal }) };
  }
}
