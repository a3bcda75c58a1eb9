import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { PROMETHEUS_CONFIG } from './paths';

/** The parts of a Prometheus config the tests look at. */
export interface PrometheusConfig {
  scrape_configs: Array<{
    job_name: string;
    metrics_path?: string;
    static_configs: Array<{ targets: string[] }>;
  }>;
}

/** deploy/prometheus/prometheus.yml, parsed. */
export function loadPrometheusConfig(): PrometheusConfig {
  return parse(readFileSync(PROMETHEUS_CONFIG, 'utf8')) as PrometheusConfig;
}
