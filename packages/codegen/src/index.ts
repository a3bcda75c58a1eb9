export { VERSION } from './version';
export { runCli, parseCliArguments } from './cli/cli';
export type { CliArguments, CliOutput } from './cli/cli';
export {
  CodegenError,
  GatewayLimitError,
  NameClashError,
  ProtoParseError,
  UnsupportedProtoError,
} from './errors';
export { generate, generateModules, warningLine } from './generator/generate';
export type { GenerateResult } from './generator/generate';
export { DEFAULT_GENERATOR_OPTIONS } from './generator/options';
export type { GeneratorOptions } from './generator/options';
export { modelFromDescriptors } from './model/from-descriptors';
export type { FileDescriptorObject } from './model/from-descriptors';
export { loadProtoFiles } from './model/from-proto-files';
export type { LoadProtoFilesOptions } from './model/from-proto-files';
export type {
  CodegenRequest,
  DefaultValue,
  EnumModel,
  ExtensionModel,
  FieldModel,
  FileModel,
  GeneratedFile,
  MessageModel,
  MethodModel,
  ScalarType,
  ServiceModel,
  TypeLocation,
  TypeRef,
} from './model/model';
export { parsePluginParameter, runPlugin } from './plugin/plugin';
