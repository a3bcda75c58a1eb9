/**
 * ioredis' connection options, which the Redis stores take only inside `url` or `redisOptions`
 * (name -> where to give it). `new RedisStateStore({ host, port })`, written as for ioredis,
 * connected to the default redis://127.0.0.1:6379 and kept the grains' state there.
 */
export const REDIS_CONNECTION_OPTIONS: Readonly<Record<string, string>> = Object.fromEntries(
  ['host', 'port', 'password', 'username', 'db', 'tls', 'sentinels', 'name', 'path', 'family'].map(
    (name) => [name, `url (redis://user:password@host:port/db) or redisOptions: { ${name} }`],
  ),
);
