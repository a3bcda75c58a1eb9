import { type ChildProcess, fork } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { Cluster } from '../../src/cluster';
import type { ClusterRemoteOptions } from '../../src/cluster-options';
import { NOOP_LOGGER } from '../../src/internal/logger';
import { SeedProvider } from '../../src/providers/seed/seed-provider';

/** The attacker (core's test build: it speaks the protocol with core's own encoders). */
const ATTACKER = join(__dirname, '../../../../core/dist/test/attack/attacker.js');
const NODE = join(__dirname, 'attack-node.js');
const MAKE_CERTS = join(__dirname, '../../../../../examples/ping-pong/scripts/make-certs.sh');
const SECRET = 'attack-suite-secret-0123456789abcdef';

/** How long the client's calls are watched before, during (at least) and after an attack. */
const BEFORE_MS = 500;
const AFTER_MS = 800;
/** Attacks that hold resources hold them this long. */
const HOLD_MS = 1500;
/** Closed-loop callers of the legitimate member. */
const CALLERS = 4;
/** A legitimate call that takes longer than this counts as failed. */
const CALL_TIMEOUT_MS = 3000;

const ATTACKS = [
  'random bytes',
  'wrong HTTP/2 paths and content types',
  'malformed, truncated and out-of-table frames',
  'oversize message before the handshake',
  'oversize message after the handshake',
  'huge table strings',
  '2,000 connections',
  'a peer that never reads',
  'missing actors and kinds, spawn of an unregistered kind',
  'wrong protocol version',
  "impersonating a member's address and member id",
  'a system Stop to each system actor',
  'malformed seed-protocol messages',
  'requests naming 2,000 sender addresses',
];

interface Answer {
  kind: string;
  code: string;
  detail: string;
}

/** A call of the legitimate member: when it started, how long it took, whether it succeeded. */
interface Call {
  at: number;
  ms: number;
  ok: boolean;
}

/** One row of the table. */
interface Row {
  mode: string;
  attack: string;
  okDuring: number;
  okAfter: number;
  p99: [number, number, number];
  rssPeakMiB: number;
  rssBaseMiB: number;
  logLines: number;
  logPerSecond: number;
  answers: Answer[];
  untyped: Answer[];
}

function p99(calls: Call[]): number {
  if (calls.length === 0) return NaN;
  const sorted = calls.map((c) => c.ms).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}
const okShare = (calls: Call[]): number =>
  calls.length === 0 ? NaN : calls.filter((c) => c.ok).length / calls.length;

/**
 * A refusal the attacker can act on: a gRPC status with a reason, a handshake refusal naming
 * what, an error reply with a Granary code, or an HTTP status (the wrong-path requests).
 */
function typed(a: Answer): boolean {
  if (a.kind === 'refusal') return a.code.length > 0 && a.detail.length > 0;
  if (a.kind === 'reply') return /^ERR_[A-Z_]+$/.test(a.code);
  if (a.kind === 'http') return /^[2345]\d\d$/.test(a.code);
  return a.code !== 'ACCEPTED' && a.detail.length > 0;
}

/** The node process, its log lines and RSS samples. */
class NodeUnderAttack {
  readonly child: ChildProcess;
  address = '';
  logLines: number[] = [];
  rss: Array<[number, number]> = [];
  readonly ready: Promise<void>;

  constructor(remote: object) {
    this.child = fork(NODE, [JSON.stringify(remote)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    this.ready = new Promise((resolve, reject) => {
      createInterface({ input: this.child.stdout! }).on('line', (l) => {
        const m = JSON.parse(l) as { type: string; address?: string; rss?: number };
        if (m.type === 'ready') {
          this.address = m.address!;
          resolve();
        } else if (m.type === 'rss') this.rss.push([Date.now(), m.rss!]);
      });
      this.child.once('exit', (code) => reject(new Error(`node exited (${code})`)));
    });
    createInterface({ input: this.child.stderr! }).on('line', () => this.logLines.push(Date.now()));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  rssMax(from: number, to: number): number {
    let max = 0;
    for (const [t, r] of this.rss) if (t >= from && t <= to && r > max) max = r;
    return max;
  }

  rssBefore(at: number): number {
    const before = this.rss.filter(([t]) => t < at);
    return before.length ? before[before.length - 1]![1] : 0;
  }

  logsBetween(from: number, to: number): number {
    return this.logLines.filter((t) => t >= from && t <= to).length;
  }
}

function runAttacker(config: object): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const child = fork(ATTACKER, [JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    const answers: Answer[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = JSON.parse(l) as Answer & { type: string };
      if (m.type === 'answer') answers.push({ kind: m.kind, code: m.code, detail: m.detail });
      if (m.type === 'crash') reject(new Error(`attacker crashed: ${m.detail}`));
    });
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve(answers);
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('attack suite: a node as users start one, a member calling it, and an attacker', function () {
  this.timeout(600_000);
  const rows: Row[] = [];
  let certDir: string;
  let pem: { ca: string; cert: string; key: string };

  before(() => {
    certDir = mkdtempSync(join(tmpdir(), 'granary-attack-'));
    execFileSync(MAKE_CERTS, [certDir, 'node'], { stdio: 'ignore' });
    const read = (f: string): string => readFileSync(join(certDir, f), 'utf8');
    pem = { ca: read('ca.crt'), cert: read('node.crt'), key: read('node.key') };
  });
  after(() => {
    rmSync(certDir, { recursive: true, force: true });
    printTable(rows);
  });

  const modes: Array<[string, () => Omit<ClusterRemoteOptions, 'host' | 'port'>, () => object]> = [
    ['loopback, no secret', () => ({}), () => ({})],
    ['secret (attacker without it)', () => ({ secret: SECRET }), () => ({})],
    [
      'mTLS (attacker without a certificate)',
      () => ({ tls: { ...pem, requireClientCert: true } }),
      () => ({ ca: pem.ca }),
    ],
  ];

  for (const [mode, remote, attackerTarget] of modes) {
    it(`${mode}: the node stays up, the member keeps calling, RSS and logs stay bounded, refusals are typed`, async () => {
      const node = new NodeUnderAttack(remote());
      let client: Cluster | undefined;
      try {
        await node.ready;
        client = await Cluster.start({
          name: 'attacked',
          id: 'member',
          provider: new SeedProvider({ seed: node.address, logger: NOOP_LOGGER }),
          kinds: [],
          remote: { host: '127.0.0.1', port: 0, ...remote() },
          logger: NOOP_LOGGER,
        });
        const member = client;
        const calls: Call[] = [];
        let stop = false;
        const caller = async (w: number): Promise<void> => {
          for (let n = w; !stop; n += CALLERS) {
            const at = Date.now();
            let ok = true;
            try {
              await member.request('mirror', `m-${n % 20}`, { n }, { timeoutMs: CALL_TIMEOUT_MS });
            } catch {
              ok = false;
            }
            calls.push({ at, ms: Date.now() - at, ok });
            await sleep(5);
          }
        };
        const callers = Array.from({ length: CALLERS }, (_, w) => caller(w));
        await sleep(1000); // warm: activations, links
        for (const attack of ATTACKS) {
          const t0 = Date.now();
          await sleep(BEFORE_MS);
          const t1 = Date.now();
          const answers = await runAttacker({
            attack,
            target: { address: node.address, ...attackerTarget() },
            victim: { address: member.address, memberId: member.id },
            holdMs: HOLD_MS,
          });
          const t2 = Date.now();
          await sleep(AFTER_MS);
          const t3 = Date.now();
          const window = (from: number, to: number): Call[] =>
            calls.filter((c) => c.at >= from && c.at < to);
          const logs = node.logsBetween(t1, t3);
          rows.push({
            mode,
            attack,
            okDuring: okShare(window(t1, t2)),
            okAfter: okShare(window(t2 + 200, t3)),
            p99: [p99(window(t0, t1)), p99(window(t1, t2)), p99(window(t2, t3))],
            rssBaseMiB: node.rssBefore(t1) / 2 ** 20,
            rssPeakMiB: node.rssMax(t1, t3) / 2 ** 20,
            logLines: logs,
            logPerSecond: logs / ((t3 - t1) / 1000),
            answers,
            untyped: answers.filter((a) => !typed(a)),
          });
          expect(node.alive, `${attack}: the node is up`).to.equal(true);
        }
        stop = true;
        await Promise.all(callers);
      } finally {
        await client?.shutdown({ graceful: false }).catch(() => undefined);
        node.child.kill('SIGKILL');
      }
      const mine = rows.filter((r) => r.mode === mode);
      for (const r of mine) {
        const what = `${mode} / ${r.attack}`;
        expect(r.okDuring, `${what}: ok during`).to.be.at.least(0.99);
        expect(r.okAfter, `${what}: ok after`).to.equal(1);
        expect(r.rssPeakMiB - r.rssBaseMiB, `${what}: RSS growth (MiB)`).to.be.below(64);
        expect(r.logPerSecond, `${what}: log lines per second`).to.be.below(20);
        expect(r.untyped, `${what}: untyped answers`).to.deep.equal([]);
      }
    });
  }
});

function printTable(rows: Row[]): void {
  const f = (x: number, d = 1): string => (Number.isNaN(x) ? '-' : x.toFixed(d));
  const lines = [
    '| node | attack | ok during | ok after | p99 before / during / after (ms) | RSS base → peak (MiB) | log lines | answers |',
    '| --- | --- | --: | --: | --- | --- | --: | --- |',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.attack} | ${f(r.okDuring * 100)}% | ${f(r.okAfter * 100)}% | ${r.p99.map((x) => f(x, 0)).join(' / ')} | ${f(r.rssBaseMiB, 0)} → ${f(r.rssPeakMiB, 0)} | ${r.logLines} | ${summarize(r.answers)} |`,
    ),
  ];
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

function summarize(answers: Answer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers)
    counts.set(`${a.kind}:${a.code}`, (counts.get(`${a.kind}:${a.code}`) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k}×${n}`).join(', ') || 'none';
}
