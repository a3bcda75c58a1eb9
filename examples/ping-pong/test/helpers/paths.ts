import { join } from 'node:path';

/** examples/ping-pong (this file runs from dist/test/helpers). */
export const EXAMPLE_DIR = join(__dirname, '..', '..', '..');
/** The repo root: the Docker image's WORKDIR and the cwd of every node command. */
export const REPO_ROOT = join(EXAMPLE_DIR, '..', '..');
export const PROTOS_DIR = join(EXAMPLE_DIR, 'protos');
/** The generated module, checked in so `tsc -b` works on a fresh clone before any codegen. */
export const GENERATED_FILE = join(EXAMPLE_DIR, 'src', 'gen', 'protos.granary.ts');
export const CODEGEN_DIR = join(REPO_ROOT, 'packages', 'codegen');
export const CLI_BIN = join(CODEGEN_DIR, 'bin', 'granary-codegen.cjs');
export const PLUGIN_BIN = join(CODEGEN_DIR, 'bin', 'protoc-gen-granary.cjs');
export const PROTOC = '/usr/bin/protoc';
export const COMPOSE_FILE = join(REPO_ROOT, 'docker-compose.yml');
export const DOCKERFILE = join(REPO_ROOT, 'Dockerfile');
export const DOCKERIGNORE = join(REPO_ROOT, '.dockerignore');
export const DEMO_BIN = join(EXAMPLE_DIR, 'bin', 'demo.cjs');
/** Writes the env file docker-compose.yml loads (a random GRANARY_SECRET). */
export const COMPOSE_ENV_SCRIPT = join(EXAMPLE_DIR, 'scripts', 'compose-env.sh');
/** The env file the compose node services load, relative to the repo root. */
export const COMPOSE_ENV_FILE = 'granary.env';
export const GITIGNORE = join(REPO_ROOT, '.gitignore');
/** The Prometheus config docker-compose.yml mounts. */
export const PROMETHEUS_CONFIG = join(REPO_ROOT, 'deploy', 'prometheus', 'prometheus.yml');
/** The Kubernetes manifest of the example (docs/kubernetes.md). */
export const KUBERNETES_MANIFEST = join(
  REPO_ROOT,
  'deploy',
  'kubernetes',
  'granary-ping-pong.yaml',
);
