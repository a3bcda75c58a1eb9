/**
 * `@granary/testkit/telemetry`: OpenTelemetry SDK set-ups for benchmarks of Granary's telemetry
 * cost. A subpath of its own because it loads the SDK (`@opentelemetry/sdk-metrics`,
 * `@opentelemetry/sdk-trace-base`, optional peer dependencies): the package's index must load
 * without them, and a test process that records nothing should not carry their ~200 modules.
 */
export { benchTelemetry } from './bench-telemetry';
export type { BenchTelemetry, BenchTelemetryOptions, BenchTelemetrySetup } from './bench-telemetry';
export { sdkOnlyMetrics, sdkOnlyTraces } from './bench-sdk-only';
export type { SdkOnlyCalls } from './bench-sdk-only';
