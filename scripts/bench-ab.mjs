#!/usr/bin/env node
// Old against new, interleaved: `node scripts/bench-ab.mjs --base <ref|dir> [--rounds N]
// [--repeats N] [--cases spec] <benchmark>...`. A claim of "no regression" needs both commits
// measured in one session on one machine, alternating, because this machine's state moves the
// figures between slots more than most changes do (README, "To compare two commits"). Run 1 measures
// old then new, run 2 new then old (ABBA), and so on. The summary gives, per case, the median of
// each tree's per-run medians, their ratio (new ÷ old), the median of the per-run ratios of
// runs made back to back ("paired"), and in how many runs new was worse.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const harness = join(root, 'bench', 'dist', 'harness.js');

function usage(message) {
  if (message) process.stderr.write(`bench-ab: ${message}\n`);
  process.stderr.write(
    'usage: node scripts/bench-ab.mjs --base <git ref | built tree dir> [--rounds 4]\n' +
      '       [--repeats 5] [--warmup N] [--cases <BENCH_CASES spec>] <benchmark>...\n' +
      'The new tree is this checkout, built (npm run build). A ref is checked out once into\n' +
      '$TMPDIR/granary-bench-ab/<sha> and installed and built there. Results: bench/results/ab/.\n',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    rounds: 4,
    repeats: 5,
    warmup: undefined,
    cases: undefined,
    base: undefined,
    names: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? usage(`${a} needs a value`);
    if (a === '--base') o.base = value();
    else if (a === '--rounds') o.rounds = Number(value());
    else if (a === '--repeats') o.repeats = Number(value());
    else if (a === '--warmup') o.warmup = Number(value());
    else if (a === '--cases') o.cases = value();
    else if (a === '--help' || a === '-h') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else o.names.push(a);
  }
  if (o.base === undefined) usage('--base is required');
  if (o.names.length === 0) usage('name at least one benchmark');
  if (!(Number.isInteger(o.rounds) && o.rounds >= 1)) usage('--rounds must be an integer >= 1');
  if (!(Number.isInteger(o.repeats) && o.repeats >= 1)) usage('--repeats must be an integer >= 1');
  if (o.warmup !== undefined && !(Number.isInteger(o.warmup) && o.warmup >= 0)) {
    usage('--warmup must be an integer >= 0');
  }
  return o;
}

function run(cmd, args, cwd, env = process.env) {
  const r = spawnSync(cmd, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}`);
}

/** The old tree: a built directory as given, or a worktree of the ref, installed and built once. */
function baseTree(base) {
  if (existsSync(join(base, 'bench', 'dist', 'run.js'))) return resolve(base);
  const sha = spawnSync('git', ['rev-parse', '--verify', `${base}^{commit}`], {
    cwd: root,
    encoding: 'utf8',
  }).stdout.trim();
  if (!sha) usage(`--base ${base} is neither a built tree nor a commit`);
  // Outside the checkout: a second copy of the repository inside it would be linted and scanned.
  const dir = join(tmpdir(), 'granary-bench-ab', sha.slice(0, 12));
  if (!existsSync(join(dir, 'bench', 'dist', 'run.js'))) {
    if (!existsSync(dir)) run('git', ['worktree', 'add', '--detach', dir, sha], root);
    run('npm', ['ci', '--no-audit', '--no-fund'], dir);
    run('npm', ['run', 'build'], dir);
  }
  return dir;
}

/** Rates are better higher; times, sizes and costs lower; anything else is not judged. */
function direction(metric) {
  if (/per_s$/.test(metric)) return 1;
  if (
    /(^|_)(ms|us|ns_per_msg|MB|ticks|revisions|cost_ratio|calls_per_fire)$|^bytes_per_/.test(metric)
  )
    return -1;
  return 0;
}

function measure(tree, name, o) {
  const env = { ...process.env, BENCH_REPEATS: String(o.repeats), BENCH_NO_PEERS: '1' };
  if (o.cases !== undefined) env.BENCH_CASES = o.cases;
  // Both trees get the same warm-up; a base older than BENCH_WARMUP keeps its own.
  if (o.warmup !== undefined) env.BENCH_WARMUP = String(o.warmup);
  run(process.execPath, [join('bench', 'dist', 'run.js'), name], tree, env);
  return JSON.parse(readFileSync(join(tree, 'bench', 'results', `${name}.json`), 'utf8'));
}

function summarize(name, runs, median) {
  const rows = [];
  for (const c of runs[0].new.cases) {
    const pairs = runs
      .map((r) => [
        r.old.cases.find((x) => x.case === c.case)?.median,
        r.new.cases.find((x) => x.case === c.case)?.median,
      ])
      .filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b) && a !== 0);
    if (pairs.length === 0) continue;
    const dir = direction(c.metric);
    const worse = dir === 0 ? '-' : pairs.filter(([a, b]) => (b - a) * dir < 0).length;
    const old = median(pairs.map(([a]) => a));
    const neu = median(pairs.map(([, b]) => b));
    rows.push({
      case: c.case,
      metric: c.metric,
      old,
      new: neu,
      ratio: neu / old,
      paired: median(pairs.map(([a, b]) => b / a)),
      worse: `${worse}/${pairs.length}`,
    });
  }
  const fmt = (x) => (Math.abs(x) >= 1000 ? Math.round(x).toLocaleString('en') : x.toPrecision(4));
  process.stdout.write(`\n${name}: new ÷ old (paired), runs where new was worse\n`);
  for (const r of rows) {
    process.stdout.write(
      `  ${r.case.padEnd(44)} ${r.metric.padEnd(12)} ${fmt(r.old).padStart(12)} → ` +
        `${fmt(r.new).padStart(12)}  ${r.ratio.toFixed(3)} (${r.paired.toFixed(3)})  ${r.worse}\n`,
    );
  }
  return rows;
}

/** A base whose harness predates BENCH_WARMUP warms the loop benchmarks up less than this one. */
function warnUnequalWarmup(base) {
  const src = join(base, 'bench', 'src', 'harness.ts');
  if (existsSync(src) && readFileSync(src, 'utf8').includes('BENCH_WARMUP')) return;
  process.stderr.write(
    "note: the base's harness predates BENCH_WARMUP and warms every benchmark up for 1 run,\n" +
      'where this tree warms core-tell, core-request and pool-local up for 6 (LOOP_WARMUP), or\n' +
      'every benchmark for --warmup; give the base the same warm-up first (README, "To compare\n' +
      'two commits") or its first runs count against it.\n',
  );
}

function main(o) {
  if (!existsSync(harness)) usage('build this checkout first (npm run build)');
  // The harness's own median, so the summary and the harness's tables agree.
  const { median } = createRequire(import.meta.url)(harness);
  const trees = { old: baseTree(o.base), new: root };
  warnUnequalWarmup(trees.old);
  const out = join(root, 'bench', 'results', 'ab');
  mkdirSync(out, { recursive: true });
  for (const name of o.names) compare(name, trees, out, o, median);
}

function compare(name, trees, out, o, median) {
  const runs = [];
  for (let r = 1; r <= o.rounds; r++) {
    const order = r % 2 === 1 ? ['old', 'new'] : ['new', 'old'];
    const result = {};
    for (const side of order) {
      process.stdout.write(`[bench-ab] ${name} run ${r}/${o.rounds}: ${side} (${trees[side]})\n`);
      result[side] = measure(trees[side], name, o);
      writeFileSync(join(out, `${name}-${side}-${r}.json`), JSON.stringify(result[side], null, 2));
    }
    runs.push(result);
  }
  const rows = summarize(name, runs, median);
  const summary = {
    bench: name,
    old: basename(trees.old),
    rounds: o.rounds,
    repeats: o.repeats,
    warmup: o.warmup ?? null,
    rows,
  };
  writeFileSync(join(out, `${name}-summary.json`), JSON.stringify(summary, null, 2) + '\n');
}

try {
  main(parseArgs(process.argv.slice(2)));
} catch (err) {
  process.stderr.write(`bench-ab: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
