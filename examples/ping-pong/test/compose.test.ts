import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { readConfig } from '../src/config';
import type { NodeRole } from '../src/config';
import { envVarsReadBySources } from './helpers/env-vars';
import {
  argOf,
  commandOf,
  envFilesOf,
  environmentOf,
  loadCompose,
  nodeServices,
  parseEnvFile,
  redisPersistence,
} from './helpers/compose';
import type { ComposeService } from './helpers/compose';
import {
  checkServerPersistence,
  DEFAULT_REDIS_STATE_STORE_OPTIONS,
  OPS_PATHS,
} from '@granary/cluster';
import { loadPrometheusConfig } from './helpers/prometheus';
import {
  PROMETHEUS_CONFIG,
  COMPOSE_ENV_FILE,
  COMPOSE_ENV_SCRIPT,
  DOCKERFILE,
  DOCKERIGNORE,
  GITIGNORE,
  REPO_ROOT,
} from './helpers/paths';

/** The value of `--flag=value` in a service's command. */
function flag(service: ComposeService, name: string): string | undefined {
  const prefix = `--${name}=`;
  return commandOf(service)
    .find((a) => a.startsWith(prefix))
    ?.slice(prefix.length);
}

function roleOf(command: string[]): NodeRole {
  const script = command[1] ?? '';
  const role = /bin\/(seed|ponger|pinger)\.cjs$/.exec(script)?.[1];
  if (role === undefined) throw new Error(`not a node script: ${script}`);
  return role as NodeRole;
}

describe('docker-compose.yml', () => {
  const { services, volumes } = loadCompose();
  const nodes = nodeServices(services);

  it('parses and has etcd, redis, two ponger nodes, one pinger and prometheus', () => {
    expect(services).to.have.all.keys(
      'etcd',
      'redis',
      'ponger-a',
      'ponger-b',
      'pinger',
      'prometheus',
    );
    const roles = nodes.map(([, s]) => roleOf(commandOf(s))).sort();
    expect(roles).to.deep.equal(['pinger', 'ponger', 'ponger']);
  });

  it('runs etcd from an official image and redis from the redis image', () => {
    expect(services.etcd.image).to.match(
      /^(quay\.io\/coreos\/etcd|gcr\.io\/etcd-development\/etcd):v3\./,
    );
    expect(services.redis.image).to.match(/^redis:/);
  });

  it("points every node service's command at a node script that exists in the repo", () => {
    for (const [name, service] of nodes) {
      const command = commandOf(service);
      expect(command[0], name).to.equal('node');
      expect(existsSync(join(REPO_ROOT, command[1])), `${name}: ${command[1]}`).to.equal(true);
      // The bin script requires the compiled entry point the Dockerfile builds.
      const bin = readFileSync(join(REPO_ROOT, command[1]), 'utf8');
      const target = /require\('(\.\.\/dist\/src\/[^']+)'\)/.exec(bin)?.[1];
      expect(target, `${name}: ${command[1]} requires no compiled entry`).to.be.a('string');
      const compiled = join(REPO_ROOT, command[1], '..', `${target}.js`);
      expect(existsSync(compiled), `${name}: ${compiled}`).to.equal(true);
    }
  });

  it('sets only environment variables the example reads, with values it accepts', () => {
    const read = envVarsReadBySources();
    for (const [name, service] of nodes) {
      const env = environmentOf(service);
      for (const variable of Object.keys(env)) {
        expect(read.has(variable), `${name} sets ${variable}, which no code reads`).to.equal(true);
      }
      const config = readConfig(roleOf(commandOf(service)), {
        ...env,
        GRANARY_SECRET: 'a-secret-from-granary-env',
      });
      expect(config.nodeId, name).to.equal(name);
      expect(config.advertisedHost, `${name} must advertise its service name`).to.equal(name);
      expect(config.provider, name).to.equal('etcd');
    }
  });

  it('authenticates the nodes with GRANARY_SECRET from granary.env, which compose-env.sh writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'granary-compose-env-'));
    try {
      const file = join(dir, COMPOSE_ENV_FILE);
      execFileSync(COMPOSE_ENV_SCRIPT, [file], { stdio: 'ignore' });
      expect(statSync(file).mode & 0o077, 'granary.env is private').to.equal(0);
      const fromFile = parseEnvFile(readFileSync(file, 'utf8'));
      expect(Object.keys(fromFile)).to.deep.equal(['GRANARY_SECRET']);
      for (const [name, service] of nodes) {
        expect(envFilesOf(service), name).to.deep.equal([COMPOSE_ENV_FILE]);
        expect(environmentOf(service).GRANARY_SECRET, `${name} must not inline a secret`).to.equal(
          undefined,
        );
        const config = readConfig(roleOf(commandOf(service)), {
          ...environmentOf(service),
          ...fromFile,
        });
        // Listening on 0.0.0.0 is refused without a secret (InsecureRemoteError): it is set.
        expect(config.host, name).to.equal('0.0.0.0');
        expect(config.secret, name).to.equal(fromFile.GRANARY_SECRET);
        expect(Buffer.byteLength(config.secret!), name).to.be.at.least(16);
        expect(config.insecure, name).to.equal(false);
      }
      // Each run of the script makes a new secret.
      execFileSync(COMPOSE_ENV_SCRIPT, [file], { stdio: 'ignore' });
      expect(parseEnvFile(readFileSync(file, 'utf8')).GRANARY_SECRET).to.not.equal(
        fromFile.GRANARY_SECRET,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(readFileSync(GITIGNORE, 'utf8').split('\n')).to.include(COMPOSE_ENV_FILE);
    expect(readFileSync(DOCKERIGNORE, 'utf8').split('\n')).to.include(COMPOSE_ENV_FILE);
  });

  it('points GRANARY_ETCD at the etcd service, on the port etcd listens and advertises', () => {
    const listen = new URL(flag(services.etcd, 'listen-client-urls') ?? '');
    const advertise = new URL(flag(services.etcd, 'advertise-client-urls') ?? '');
    expect(advertise.hostname).to.equal('etcd');
    expect(advertise.port).to.equal(listen.port);
    for (const [name, service] of nodes) {
      const endpoints = environmentOf(service).GRANARY_ETCD.split(',');
      for (const e of endpoints) {
        const url = new URL(e);
        expect(url.hostname, name).to.equal('etcd');
        expect(url.port, name).to.equal(listen.port);
      }
      expect(Object.keys(service.depends_on ?? {}), name).to.include('etcd');
    }
  });

  it("runs Redis as the default durability ('restart') needs it, as the store's own check says, on a named volume", () => {
    const command = commandOf(services.redis);
    expect(argOf(command, 'appendonly')).to.equal('yes');
    const level = DEFAULT_REDIS_STATE_STORE_OPTIONS.durability;
    const shortfall = checkServerPersistence(level, redisPersistence(command));
    expect(shortfall?.message, `the store would refuse this Redis at '${level}'`).to.equal(
      undefined,
    );
    // The check is real: the same Redis with appendfsync everysec (Redis' default) falls short.
    expect(
      checkServerPersistence(level, { appendonly: true, appendfsync: 'everysec' }),
    ).to.not.equal(undefined);
    const mount = (services.redis.volumes ?? []).find((v) => v.endsWith(':/data'));
    expect(mount, 'a volume at /data (the redis image writes its files there)').to.be.a('string');
    expect(volumes ?? {}).to.have.property(mount!.split(':')[0]!);
  });

  it('points GRANARY_REDIS at the redis service and the port it listens on', () => {
    const command = commandOf(services.redis);
    const port = command[command.indexOf('--port') + 1];
    const withRedis = nodes.filter(([, s]) => environmentOf(s).GRANARY_REDIS !== undefined);
    expect(withRedis.map(([n]) => n).sort()).to.deep.equal(['ponger-a', 'ponger-b']);
    for (const [name, service] of withRedis) {
      const url = new URL(environmentOf(service).GRANARY_REDIS);
      expect(url.hostname, name).to.equal('redis');
      expect(url.port, name).to.equal(port);
      expect(Object.keys(service.depends_on ?? {}), name).to.include('redis');
    }
  });

  it('runs an ops server on every node, and prometheus scrapes each one on its ops port', () => {
    const prometheus = services.prometheus as ComposeService & { volumes?: string[] };
    expect(prometheus.image).to.match(/^prom\/prometheus:v\d/);
    const mount = (prometheus.volumes ?? []).find((v) => v.includes('prometheus.yml'));
    const [hostPath, containerPath] = (mount ?? '').split(':');
    expect(join(REPO_ROOT, hostPath!)).to.equal(PROMETHEUS_CONFIG);
    expect(commandOf(prometheus)).to.include(`--config.file=${containerPath}`);
    const scrape = loadPrometheusConfig();
    const job = scrape.scrape_configs.find((j) => j.job_name === 'granary')!;
    expect(job.metrics_path ?? '/metrics').to.equal(OPS_PATHS.metrics);
    const targets = job.static_configs.flatMap((c) => c.targets).sort();
    const expected = nodes.map(([name, service]) => {
      const config = readConfig(roleOf(commandOf(service)), {
        ...environmentOf(service),
        GRANARY_SECRET: 'a-secret-from-granary-env',
      });
      // Reachable from the prometheus container: bound beyond loopback, on a fixed port.
      expect(config.opsHost, name).to.equal('0.0.0.0');
      expect(config.opsPort, name).to.be.a('number').above(0);
      expect(Object.keys(prometheus.depends_on ?? {}), 'prometheus depends_on').to.include(name);
      return `${name}:${config.opsPort}`;
    });
    expect(targets).to.deep.equal(expected.sort());
  });

  it('builds every node from the root Dockerfile', () => {
    for (const [name, service] of nodes) {
      const build = typeof service.build === 'string' ? service.build : service.build?.context;
      expect(build, name).to.equal('.');
    }
    expect(existsSync(DOCKERFILE)).to.equal(true);
  });
});

describe('Dockerfile', () => {
  const lines = readFileSync(DOCKERFILE, 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('#'));

  it('is multi-stage: a build stage with npm ci and the example build, a runtime stage', () => {
    const stages = lines.filter((l) => /^FROM\s/.test(l));
    expect(stages.length).to.be.at.least(2);
    expect(stages[0]).to.match(/\bAS build$/);
    const runs = lines.filter((l) => l.startsWith('RUN '));
    expect(runs.some((l) => /\bnpm ci\b/.test(l))).to.equal(true);
    expect(runs.some((l) => /npm run build -w @granary\/example-ping-pong/.test(l))).to.equal(true);
    expect(lines.some((l) => /^COPY --from=build .*examples/.test(l))).to.equal(true);
  });

  it('runs from the repo root, where the compose commands are relative to', () => {
    const workdirs = lines.filter((l) => l.startsWith('WORKDIR ')).map((l) => l.split(/\s+/)[1]);
    expect(new Set(workdirs)).to.deep.equal(new Set(['/app']));
    const cmd = lines.find((l) => l.startsWith('CMD '));
    const script = (JSON.parse(cmd?.slice(4) ?? '[]') as string[])[1];
    expect(existsSync(join(REPO_ROOT, script))).to.equal(true);
  });

  it('.dockerignore keeps host installs and build outputs out of the image', () => {
    const ignored = readFileSync(DOCKERIGNORE, 'utf8').split('\n');
    expect(ignored).to.include.members(['**/node_modules', '**/dist']);
  });
});
