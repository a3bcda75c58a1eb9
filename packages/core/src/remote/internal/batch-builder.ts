import type { WireBatch, WireEnvelope } from './wire';
import type { OutboundEnvelope } from './outbound-envelope';
import { encodeFrame } from './wire';

/**
 * Coalesces envelopes for one endpoint into one Batch frame. Type names, target ids and sender
 * addresses repeat a lot in practice (one actor talking to another), so each is written once
 * per batch in a table and envelopes carry indexes.
 */
export class BatchBuilder {
  private typeNames: string[] = [];
  private typeIndex = new Map<string, number>();
  private targetIds: string[] = [];
  private targetIndex = new Map<string, number>();
  private senderAddresses: string[] = [];
  private senderIndex = new Map<string, number>();
  private envelopes: WireEnvelope[] = [];
  private sources: OutboundEnvelope[] = [];
  private payloadBytes = 0;

  /** Envelopes in the current batch. */
  get count(): number {
    return this.envelopes.length;
  }

  /** Sum of the payload sizes in the current batch. */
  get bytes(): number {
    return this.payloadBytes;
  }

  add(env: OutboundEnvelope): void {
    const wire: WireEnvelope = {
      target: indexOf(this.targetIds, this.targetIndex, env.targetId),
      type: indexOf(this.typeNames, this.typeIndex, env.typeName),
      format: env.format,
      payload: env.payload,
      senderAddress: env.sender
        ? 1 + indexOf(this.senderAddresses, this.senderIndex, env.sender.address)
        : 0,
      senderId: env.sender ? env.sender.id : '',
      urgent: env.urgent,
    };
    if (env.header) wire.header = env.header;
    this.envelopes.push(wire);
    this.sources.push(env);
    this.payloadBytes += env.payload.byteLength;
  }

  /** Drops the current batch unsent and returns its envelopes, so they can be rejected. */
  discard(): OutboundEnvelope[] {
    const sources = this.sources;
    this.take();
    return sources;
  }

  /** Encodes the batch as one frame and starts an empty one. */
  take(): Buffer {
    const batch: WireBatch = {
      typeNames: this.typeNames,
      targetIds: this.targetIds,
      senderAddresses: this.senderAddresses,
      envelopes: this.envelopes,
    };
    this.typeNames = [];
    this.typeIndex = new Map();
    this.targetIds = [];
    this.targetIndex = new Map();
    this.senderAddresses = [];
    this.senderIndex = new Map();
    this.envelopes = [];
    this.sources = [];
    this.payloadBytes = 0;
    return encodeFrame({ batch });
  }
}

function indexOf(table: string[], index: Map<string, number>, value: string): number {
  let i = index.get(value);
  if (i === undefined) {
    i = table.length;
    table.push(value);
    index.set(value, i);
  }
  return i;
}
