import type { PID } from '../../pid';

/** A message serialized for one endpoint, waiting in its batch. */
export interface OutboundEnvelope {
  /** Id of the target actor on the peer. */
  targetId: string;
  typeName: string;
  format: number;
  payload: Uint8Array;
  sender?: PID;
  header?: Record<string, string>;
  urgent: boolean;
  /** A request's deadline, epoch ms: sent as the time remaining when the batch is encoded. */
  deadline?: number;
  /** The message before serialization, kept so a rejected envelope can be dead-lettered. */
  message: unknown;
}
