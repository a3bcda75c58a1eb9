import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ServerPersistence } from '@granary/cluster';
import { COMPOSE_FILE } from './paths';

/** The parts of a compose service the tests look at. */
export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, unknown>;
  env_file?: string | string[];
  volumes?: string[];
}

/** docker-compose.yml, parsed with the `yaml` package (YAML 1.2, as Compose reads it). */
export function loadCompose(): {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
} {
  return parse(readFileSync(COMPOSE_FILE, 'utf8')) as {
    services: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
}

/** The value after `--name` in a command (redis-server's `--appendonly yes` form). */
export function argOf(command: readonly string[], name: string): string | undefined {
  const i = command.indexOf(`--${name}`);
  return i < 0 ? undefined : command[i + 1];
}

/**
 * How a redis-server command line persists (`--appendonly`, `--appendfsync`), with Redis'
 * own defaults where an argument is missing (appendonly no, appendfsync everysec).
 */
export function redisPersistence(command: readonly string[]): ServerPersistence {
  const fsync = argOf(command, 'appendfsync') ?? 'everysec';
  if (fsync !== 'always' && fsync !== 'everysec' && fsync !== 'no') {
    throw new Error(`redis-server --appendfsync ${fsync}: not a Redis setting`);
  }
  return { appendonly: argOf(command, 'appendonly') === 'yes', appendfsync: fsync };
}

/** A service's environment as a name → string map (both compose forms). */
export function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const i = entry.indexOf('=');
        return i < 0 ? [entry, ''] : [entry.slice(0, i), entry.slice(i + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** A service's command as an argv array. */
export function commandOf(service: ComposeService): string[] {
  const c = service.command ?? [];
  return Array.isArray(c) ? c : c.split(/\s+/).filter(Boolean);
}

/** The services built from this repo's Dockerfile: the Granary nodes. */
export function nodeServices(services: Record<string, ComposeService>): [string, ComposeService][] {
  return Object.entries(services).filter(([, s]) => s.build !== undefined);
}

/** The env files a service loads (`env_file`, short form), as written in the compose file. */
export function envFilesOf(service: ComposeService): string[] {
  const f = service.env_file ?? [];
  return Array.isArray(f) ? f : [f];
}

/** `NAME=value` lines of an env file (blank lines and `#` comments skipped). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) continue;
    const i = l.indexOf('=');
    if (i > 0) out[l.slice(0, i)] = l.slice(i + 1);
  }
  return out;
}
