export {
  DEFAULT_GRPC_GATEWAY_OPTIONS,
  ERROR_CODE_TRAILER,
  GrpcGateway,
  IDENTITY_HEADER,
  ORIGINAL_CODE_TRAILER,
} from './grpc-gateway';
export type { GrpcGatewayOptions, GrpcGatewayStats } from './grpc-gateway';
export { grpcStatusOf } from './grpc-status';
export type { GatewayStatus } from './grpc-status';
export { GatewayLimitError } from '../errors';
