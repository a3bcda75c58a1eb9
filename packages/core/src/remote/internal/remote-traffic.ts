/**
 * Frames and bytes a node's links wrote and received (every frame: handshakes, batches, chunks,
 * credits), and the memory incomplete large messages hold. Plain counters bumped on each frame,
 * read by the cluster's metrics at collection.
 */
export class RemoteTraffic {
  framesIn = 0;
  framesOut = 0;
  bytesIn = 0;
  bytesOut = 0;
  /**
   * Bytes held now by large messages whose chunks are still arriving, over all links (at most
   * `limits.maxIncompleteMessageBytes`).
   */
  incompleteBytes = 0;
}
