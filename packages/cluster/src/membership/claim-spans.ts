import { ROOT_CONTEXT, type Span } from '@opentelemetry/api';
import { firstShardOf } from '../placement/kind-ranges';
import { ATTR_CLAIM_RANGE, ATTR_GRAIN_KIND, ATTR_SHARD } from '../telemetry/attributes';
import type { ClusterTelemetry } from '../telemetry/telemetry';
import type { KindClaims } from './kind-claims';

/** Span names of shard claims and releases. */
export const SPAN_CLAIM = 'granary.shard.claim';
export const SPAN_RELEASE = 'granary.shard.release';

/** The span of one claim or release of a range, when tracing is on (ShardClaims). */
export function claimSpan(
  telemetry: ClusterTelemetry,
  name: string,
  k: KindClaims,
  range: number,
): Span | undefined {
  if (!telemetry.tracing) return undefined;
  const attributes = {
    [ATTR_GRAIN_KIND]: k.name,
    [ATTR_SHARD]: firstShardOf(range, k.shards),
    [ATTR_CLAIM_RANGE]: range,
  };
  return telemetry.startSpan(name, 0 /* INTERNAL */, attributes, ROOT_CONTEXT);
}
