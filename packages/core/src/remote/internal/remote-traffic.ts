/**
 * Frames and bytes a node's links wrote and received (every frame: handshakes, batches, chunks,
 * credits). Plain counters bumped on each frame, read by the cluster's metrics at collection.
 */
export class RemoteTraffic {
  framesIn = 0;
  framesOut = 0;
  bytesIn = 0;
  bytesOut = 0;
}
