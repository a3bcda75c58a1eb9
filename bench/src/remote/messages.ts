import * as protobuf from 'protobufjs';
import { serialization } from '@granary/core';

/** The .proto of the benchmarks' messages (peer processes register it too). */
export const BENCH_PROTO = `
syntax = "proto3";
package bench;
message Ping { int32 n = 1; string text = 2; }
message RawBatch { repeated bytes items = 1; }
`;

/** The small protobuf message every remote benchmark sends (~12 bytes encoded). */
const root = protobuf.parse(BENCH_PROTO).root;

export const Ping = root.lookupType('bench.Ping');
export const RawBatch = root.lookupType('bench.RawBatch');
serialization.registerRoot(root);

/** A Ping with sequence number `n`. */
export function ping(n: number): protobuf.Message {
  return Ping.create({ n, text: 'hello' });
}

/** Raw gRPC method paths of the peer's baseline server (bytes in, bytes out). */
export const RAW_ONE_WAY = '/bench.Raw/OneWay';
export const RAW_ECHO_STREAM = '/bench.Raw/EchoStream';
export const RAW_UNARY = '/bench.Raw/Unary';
