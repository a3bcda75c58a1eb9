export { readConfig, ENV_VARS, DEFAULT_NODE_CONFIG } from './config';
export type { NodeConfig, NodeRole, ProviderName, EnvVar } from './config';
export { ConfigError, DemoOptionError } from './errors';
export { createNodeLogger } from './log';
export { Ponger } from './ponger';
export type { PongerState } from './ponger';
export { Pinger } from './pinger';
export type { PingerOptions } from './pinger';
export { createProvider } from './provider';
export { startNode } from './node';
export type { RunningNode } from './node';
export { DemoRunner } from './demo/demo-runner';
export type { DemoOutput, DemoResult } from './demo/demo-runner';
export { DEFAULT_DEMO_OPTIONS, DEMO_USAGE, parseDemoOptions } from './demo/demo-options';
export type { DemoOptions } from './demo/demo-options';
export {
  PingMessage,
  PongMessage,
  PongerClient,
  PongerGrain,
  pongerKind,
} from './gen/protos.granary';
