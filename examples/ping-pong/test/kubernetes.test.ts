import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import {
  checkServerPersistence,
  DEFAULT_GRAINS_OPTIONS,
  DEFAULT_REDIS_STATE_STORE_OPTIONS,
  OPS_PATHS,
} from '@granary/cluster';
import { redisPersistence } from './helpers/compose';
import { ENV_VARS, readConfig, type EnvVar, type NodeRole } from '../src/config';
import { envVarsReadBySources } from './helpers/env-vars';
import { KUBERNETES_MANIFEST, REPO_ROOT } from './helpers/paths';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

interface EnvEntry {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string };
  };
}

interface Probe {
  httpGet?: { path: string; port: string | number };
}

interface Container {
  name: string;
  image: string;
  command: string[];
  ports: Array<{ name: string; containerPort: number }>;
  env: EnvEntry[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
}

interface Manifest {
  kind: string;
  metadata: { name: string };
  // Each kind has its own spec shape; the test reads the fields it checks.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec: Record<string, any>;
  stringData?: Record<string, string>;
}

const docs = parseAllDocuments(readFileSync(KUBERNETES_MANIFEST, 'utf8')).map(
  (d) => d.toJS() as Manifest,
);
const byKind = (kind: string): Manifest[] => docs.filter((d) => d.kind === kind);
const named = (kind: string, name: string): Manifest =>
  docs.find((d) => d.kind === kind && d.metadata.name === name)!;

/** The Granary node deployments (they run a bin/<role>.cjs script). */
const nodes = byKind('Deployment').map((d) => {
  const container = d.spec.template.spec.containers[0] as Container;
  const role = /bin\/(ponger|pinger|seed)\.cjs$/.exec(container.command[1] ?? '')?.[1] as NodeRole;
  return { deployment: d, container, role };
});

/** What the container's environment resolves to, with the downward API and secret filled in. */
function resolvedEnv(container: Container, pod: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env) {
    if (e.value !== undefined) {
      env[e.name] = e.value.replace(/\$\(([A-Z_]+)\)/g, (_, n: string) => env[n] ?? '');
    } else if (e.valueFrom?.fieldRef) env[e.name] = pod[e.valueFrom.fieldRef.fieldPath]!;
    else if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      env[e.name] = named('Secret', ref.name).stringData![ref.key]!;
    }
  }
  return env;
}

const POD = { 'metadata.name': 'ponger-7d9f-abcde', 'status.podIP': '10.1.2.3' };

describe('deploy/kubernetes/granary-ping-pong.yaml', () => {
  it('parses: a secret, etcd and redis, ponger and pinger deployments, a PodDisruptionBudget', () => {
    expect(byKind('Secret').map((d) => d.metadata.name)).to.deep.equal(['granary-cluster']);
    expect(
      byKind('StatefulSet')
        .map((d) => d.metadata.name)
        .sort(),
    ).to.deep.equal(['etcd', 'redis']);
    expect(nodes.map((n) => n.role).sort()).to.deep.equal(['pinger', 'ponger']);
    expect(byKind('PodDisruptionBudget')).to.have.length(1);
  });

  it('runs node scripts that exist, from the image the Dockerfile builds', () => {
    for (const { container } of nodes) {
      expect(container.command[0]).to.equal('node');
      expect(existsSync(join(REPO_ROOT, container.command[1]!)), container.command[1]).to.equal(
        true,
      );
    }
  });

  it('sets only variables the example reads, with values it accepts; POD_NAME and POD_IP from the downward API', () => {
    const read = envVarsReadBySources();
    for (const { container, role } of nodes) {
      const fields = Object.fromEntries(
        container.env
          .filter((e) => e.valueFrom?.fieldRef)
          .map((e) => [e.name, e.valueFrom!.fieldRef!.fieldPath]),
      );
      expect(fields, container.name).to.deep.equal({
        POD_NAME: 'metadata.name',
        POD_IP: 'status.podIP',
      });
      for (const e of container.env) {
        if (e.name in fields) continue;
        expect(
          read.has(e.name) || (ENV_VARS as readonly string[]).includes(e.name),
          `${container.name} sets ${e.name}`,
        ).to.equal(true);
      }
      const env = resolvedEnv(container, POD);
      const config = readConfig(role, env as Partial<Record<EnvVar, string>>);
      expect(config.nodeId).to.equal(POD['metadata.name']);
      expect(config.advertisedHost).to.equal(POD['status.podIP']);
      expect(config.host).to.equal('0.0.0.0');
      expect(config.provider).to.equal('etcd');
      // The secret comes from the Secret, never inline.
      const secret = container.env.find((e) => e.name === 'GRANARY_SECRET')!;
      expect(secret.value).to.equal(undefined);
      expect(secret.valueFrom?.secretKeyRef?.name).to.equal('granary-cluster');
      expect(config.secret).to.be.a('string');
    }
  });

  it('exposes the remote and ops ports the configuration names, and probes the ops paths', () => {
    for (const { container, role, deployment } of nodes) {
      const config = readConfig(
        role,
        resolvedEnv(container, POD) as Partial<Record<EnvVar, string>>,
      );
      const port = (name: string) => container.ports.find((p) => p.name === name)?.containerPort;
      expect(port('remote'), container.name).to.equal(config.port);
      expect(port('ops'), container.name).to.equal(config.opsPort);
      expect(config.opsHost).to.equal('0.0.0.0');
      const probes = {
        startupProbe: OPS_PATHS.startupz,
        readinessProbe: OPS_PATHS.readyz,
        livenessProbe: OPS_PATHS.livez,
      } as const;
      for (const [probe, path] of Object.entries(probes)) {
        const get = container[probe as keyof typeof probes]?.httpGet;
        expect(get?.path, `${container.name} ${probe}`).to.equal(path);
        const target = typeof get?.port === 'string' ? port(get.port) : get?.port;
        expect(target, `${container.name} ${probe} port`).to.equal(config.opsPort);
      }
      const annotations = deployment.spec.template.metadata.annotations as Record<string, string>;
      expect(annotations['prometheus.io/port']).to.equal(String(config.opsPort));
      expect(annotations['prometheus.io/path']).to.equal(OPS_PATHS.metrics);
    }
  });

  it('gives the graceful leave more time than the drain takes, and never drops below the replicas', () => {
    // The drain ends every activation (onDeactivate gets at most the grains' deadline,
    // requestTimeoutMs) and then releases the claims; twice that is the bound we leave room for.
    const drainSeconds = (2 * DEFAULT_GRAINS_OPTIONS.requestTimeoutMs) / 1000;
    for (const { deployment, container } of nodes) {
      const spec = deployment.spec;
      expect(spec.template.spec.terminationGracePeriodSeconds, container.name).to.be.above(
        drainSeconds,
      );
      expect(spec.strategy.type).to.equal('RollingUpdate');
      expect(spec.strategy.rollingUpdate.maxUnavailable, container.name).to.equal(0);
    }
    const pdb = byKind('PodDisruptionBudget')[0]!;
    const ponger = nodes.find((n) => n.role === 'ponger')!.deployment;
    expect(pdb.spec.selector.matchLabels).to.deep.equal(ponger.spec.selector.matchLabels);
    expect(pdb.spec.maxUnavailable).to.be.below(ponger.spec.replicas);
  });

  it("keeps Redis' files (--dir) on a persistent volume claimed per pod", () => {
    const set = named('StatefulSet', 'redis');
    const redis = set.spec.template.spec.containers[0] as Container & {
      volumeMounts: Array<{ name: string; mountPath: string }>;
    };
    const dir = redis.command[redis.command.indexOf('--dir') + 1];
    const mount = redis.volumeMounts.find((m) => m.mountPath === dir);
    expect(mount, `a volume mounted at --dir ${dir}`).to.not.equal(undefined);
    const claims = (set.spec.volumeClaimTemplates as Array<{ metadata: { name: string } }>).map(
      (c) => c.metadata.name,
    );
    expect(claims, 'the mount comes from a volumeClaimTemplate (not an emptyDir)').to.include(
      mount!.name,
    );
  });

  it('points the nodes at the etcd and redis services, with redis on its append-only file', () => {
    const etcd = named('StatefulSet', 'etcd').spec.template.spec.containers[0] as Container;
    const etcdPort = etcd.ports.find((p) => p.name === 'client')!.containerPort;
    const redis = named('StatefulSet', 'redis').spec.template.spec.containers[0] as Container;
    const args = redis.command;
    expect(args[args.indexOf('--appendonly') + 1]).to.equal('yes');
    const level = DEFAULT_REDIS_STATE_STORE_OPTIONS.durability;
    const shortfall = checkServerPersistence(level, redisPersistence(args));
    expect(shortfall?.message, `the store would refuse this Redis at '${level}'`).to.equal(
      undefined,
    );
    const redisPort = Number(args[args.indexOf('--port') + 1]);
    for (const { container, role } of nodes) {
      const config = readConfig(
        role,
        resolvedEnv(container, POD) as Partial<Record<EnvVar, string>>,
      );
      for (const e of config.etcd) {
        const url = new URL(e);
        expect(url.hostname).to.equal(named('Service', 'etcd').metadata.name);
        expect(Number(url.port)).to.equal(etcdPort);
      }
      if (config.redis !== undefined) {
        const url = new URL(config.redis);
        expect(url.hostname).to.equal(named('Service', 'redis').metadata.name);
        expect(Number(url.port)).to.equal(redisPort);
      }
    }
    expect(
      nodes.find((n) => n.role === 'ponger')!.container.env.some((e) => e.name === 'GRANARY_REDIS'),
    ).to.equal(true);
  });
});
