import type { Redis } from 'ioredis';
import { TRANSIENT_REPLIES } from './transient-replies';

/** How a Redis server keeps data across a restart: its append-only file settings. */
export interface ServerPersistence {
  /** `appendonly yes`: every write goes to the append-only file before Redis replies. */
  appendonly: boolean;
  /** `appendfsync`: when the file is fsynced (`always` before each reply). */
  appendfsync?: 'always' | 'everysec' | 'no';
}

/** What the durability check needs to know about the server behind one connection. */
export interface ServerFacts {
  /** Undefined when CONFIG GET failed and nothing was declared. */
  persistence: ServerPersistence | undefined;
  /** Where `persistence` came from. */
  persistenceSource: 'config' | 'declared' | 'unknown';
  /** Why CONFIG GET failed (a managed Redis disables it), if it did. */
  configError: string | undefined;
  /** `redis_version` from INFO ('' if INFO failed). */
  version: string;
  /** `role` from INFO replication: 'master' or 'slave' ('' if INFO failed). */
  role: string;
  /** Replicas in state `online` (INFO replication). */
  replicas: number;
  /** The server has WAITAOF (Redis 7.2 and later). */
  waitAof: boolean;
}

/** First version with WAITAOF. */
const WAITAOF_SINCE: readonly [number, number] = [7, 2];

/**
 * Reads the server's persistence settings (CONFIG GET append*) and replication state (INFO).
 * Where CONFIG is disabled, `declared` (the store's `serverPersistence` option) stands in.
 */
export async function readServerFacts(
  node: Redis,
  declared: ServerPersistence | undefined,
): Promise<ServerFacts> {
  let persistence: ServerPersistence | undefined = declared;
  let persistenceSource: ServerFacts['persistenceSource'] = declared ? 'declared' : 'unknown';
  let configError: string | undefined;
  try {
    const pairs = (await node.config('GET', 'append*')) as string[];
    const config = new Map<string, string>();
    for (let i = 0; i + 1 < pairs.length; i += 2) config.set(pairs[i]!, pairs[i + 1]!);
    const fsync = config.get('appendfsync') as ServerPersistence['appendfsync'];
    persistence = {
      appendonly: config.get('appendonly') === 'yes',
      ...(fsync === undefined ? {} : { appendfsync: fsync }),
    };
    persistenceSource = 'config';
  } catch (err) {
    // Only a refusal by the server means "disabled"; a lost connection or a server still
    // loading is not an answer.
    if (!isRefusal(err)) throw err;
    configError = err.message;
  }
  let info = new Map<string, string>();
  try {
    info = parseInfo(await node.info());
  } catch (err) {
    if (!isRefusal(err)) throw err;
  }
  const version = info.get('redis_version') ?? '';
  let replicas = 0;
  for (const [field, value] of info) {
    if (/^slave\d+$/.test(field) && /(^|,)state=online(,|$)/.test(value)) replicas++;
  }
  return {
    persistence,
    persistenceSource,
    configError,
    version,
    role: info.get('role') ?? '',
    replicas,
    waitAof: atLeast(version, WAITAOF_SINCE),
  };
}

function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out.set(line.slice(0, at), line.slice(at + 1));
  }
  return out;
}

function atLeast(version: string, [major, minor]: readonly [number, number]): boolean {
  const [a = 0, b = 0] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

function isRefusal(err: unknown): err is Error {
  return err instanceof Error && err.name === 'ReplyError' && !TRANSIENT_REPLIES.test(err.message);
}
