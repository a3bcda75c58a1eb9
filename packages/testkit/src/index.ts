export { startEtcd } from './etcd';
export type { EtcdHandle, EtcdOptions } from './etcd';
export { startRedis } from './redis';
export type { RedisHandle, RedisOptions } from './redis';
export { redisSentinelUnavailable, startRedisSentinel } from './redis-sentinel';
export type { RedisSentinelHandle, RedisSentinelOptions } from './redis-sentinel';
export { respCommand } from './resp';
export type { RespValue } from './resp';
export { freePort } from './free-port';
export { loadModuleCopy } from './module-copy';
export { checkErrorClasses } from './error-classes';
export type { CheckErrorClassesOptions } from './error-classes';
export { isAlive, trackedPids } from './cleanup';
export { ManagedServer } from './managed-server';
export type { ServerSpec, StopOptions } from './managed-server';
export { TestkitError, BinaryMissingError, ServerStartError } from './errors';
export { NodeProcess } from './cluster/node-process';
export type { NodeLine, NodeProcessOptions } from './cluster/node-process';
export { TestCluster } from './cluster/test-cluster';
export type {
  InProcessNode,
  NodeContext,
  TestClusterNode,
  TestClusterOptions,
  TopologyView,
} from './cluster/test-cluster';
export { startEtcdCluster } from './etcd-cluster';
export type { EtcdClusterHandle, EtcdClusterOptions, EtcdMemberHandle } from './etcd-cluster';
export { startTcpProxy } from './tcp-proxy';
export type { TcpProxyHandle, TcpProxyOptions } from './tcp-proxy';
export { startTestNetwork, testNetworkUnavailable } from './test-network';
export type { TestHost, TestNetwork } from './test-network';
export {
  errorsOnlyLogger,
  lineWriter,
  nodeConfig,
  recordingLogger,
  silentLogger,
  type RecordedLine,
} from './node-output';
export { waitUntil } from './wait-until';
export type { Subscribe } from './wait-until';
export { ManualClock } from './manual-clock';
export { AckLedger } from './checks/ack-ledger';
export { NON_GRPC_PAYLOADS, closedAfter, openFds } from './checks/non-grpc-traffic';
export type { AckReport } from './checks/ack-ledger';
export { applyOp, emptyOpCounter, isOpMessage } from './checks/idempotent-ops';
export type { OpCounterState, OpMessage, OpReply } from './checks/idempotent-ops';
export { OpLoad, errorCode } from './checks/op-load';
export type { AvailabilityWindow, OpLoadOptions } from './checks/op-load';
// The OpenTelemetry SDK set-ups of the benchmarks: `@granary/testkit/telemetry` (src/telemetry.ts).
