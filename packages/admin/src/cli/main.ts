import { parseArgs } from 'node:util';
import type { Target } from './admin-client';
import { call } from './call';
import * as commands from './commands';
import { CliExit, EXIT } from './exit-codes';
import { HELP } from './help';
import * as reminders from './reminders';
import { printable } from './table';
import { watch } from './watch';

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
  /** A progress line (overwritten in place on a terminal). */
  progress?: (line: string) => void;
}

const DEFAULT_URL = 'http://127.0.0.1:9464';

/** Runs the `granary` CLI with `argv` (without node and the script); resolves with the exit code. */
export async function runCli(argv: string[], given: CliIo): Promise<number> {
  // Everything printed can hold text from the cluster (grain identities, errors): escaped here.
  const { progress } = given;
  const io: CliIo = {
    out: (text) => given.out(printable(text, true)),
    err: (text) => given.err(printable(text, true)),
    env: given.env,
    ...(progress === undefined ? {} : { progress: (line) => progress(printable(line)) }),
  };
  try {
    return await run(argv, io);
  } catch (err) {
    if (err instanceof CliExit) {
      io.err(`granary: ${err.message}\n`);
      return err.exitCode;
    }
    io.err(`granary: ${(err as Error).stack ?? String(err)}\n`);
    return EXIT.failed;
  }
}

async function run(original: string[], io: CliIo): Promise<number> {
  const { argv, request } = takeCallJson(original);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        json: { type: 'boolean' },
        timeout: { type: 'string' },
        kind: { type: 'string' },
        top: { type: 'string' },
        by: { type: 'string' },
        proto: { type: 'string', multiple: true },
        include: { type: 'string', short: 'I', multiple: true },
        idempotent: { type: 'boolean' },
        'no-wait': { type: 'boolean' },
        count: { type: 'string' },
        limit: { type: 'string' },
        after: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new CliExit(EXIT.usage, `${(err as Error).message}\n\n${HELP.main}`);
  }
  const { values: v, positionals } = parsed;
  const [command, ...args] = positionals;
  if (command === undefined || command === 'help') {
    io.out(HELP[args[0] ?? 'main'] ?? HELP.main!);
    return command === undefined && !v.help ? EXIT.usage : EXIT.ok;
  }
  if (HELP[command] === undefined || command === 'main') {
    throw new CliExit(EXIT.usage, `unknown command ${command}\n\n${HELP.main}`);
  }
  if (v.help) {
    io.out(HELP[command]!);
    return EXIT.ok;
  }
  const target: Target = {
    url: v.url ?? io.env.GRANARY_ADMIN_URL ?? DEFAULT_URL,
    token: v.token ?? io.env.GRANARY_ADMIN_TOKEN,
    timeoutMs: positiveInt(v.timeout, 10_000, '--timeout'),
  };
  const need = (n: number, usage: string) => {
    if (args.length !== n) throw new CliExit(EXIT.usage, `usage: ${usage}`);
  };
  let output: commands.Output;
  switch (command) {
    case 'members':
      need(0, 'granary members');
      output = await commands.members(target);
      break;
    case 'shards':
      need(0, 'granary shards [--kind K]');
      output = await commands.shards(target, v.kind);
      break;
    case 'locate':
      need(2, 'granary locate <kind> <id>');
      output = await commands.locate(target, args[0]!, args[1]!);
      break;
    case 'grains': {
      need(0, 'granary grains [--kind K] [--top N] [--by calls|time]');
      const by = v.by ?? 'calls';
      if (by !== 'calls' && by !== 'time')
        throw new CliExit(EXIT.usage, '--by must be calls or time');
      output = await commands.grains(target, v.kind, positiveInt(v.top, 10, '--top'), by);
      break;
    }
    case 'pools':
      need(0, 'granary pools');
      output = await commands.pools(target);
      break;
    case 'call':
      need(3, "granary call <kind> <id> <Method> --json '{...}' --proto <file>");
      output = await call(
        target,
        args[0]!,
        args[1]!,
        args[2]!,
        request ?? '{}',
        v.proto ?? [],
        v.include ?? [],
        v.idempotent === true,
      );
      io.out(output.text);
      return EXIT.ok;
    case 'drain':
      need(1, 'granary drain <member> [--no-wait]');
      output = await commands.drain(
        target,
        args[0]!,
        !v['no-wait'],
        io.progress ?? (() => undefined),
      );
      break;
    case 'reminders':
      output = await reminderCommand(target, args, v.limit, v.after);
      break;
    case 'watch':
      need(0, 'granary watch [--count N]');
      await watch(target, positiveInt(v.count, Infinity, '--count'), v.json === true, (l) =>
        io.out(l + '\n'),
      );
      return EXIT.ok;
    default:
      throw new CliExit(EXIT.usage, `unknown command ${command}`);
  }
  io.out(v.json ? JSON.stringify(output.json, null, 2) + '\n' : output.text);
  if (output.notAnswering.length > 0) {
    for (const n of output.notAnswering)
      io.err(`not answering: ${n.id} (${n.address}): ${n.error}\n`);
    return EXIT.incomplete;
  }
  return EXIT.ok;
}

/** `granary reminders [list <kind> [<id>] [--limit N] | remove <kind> <id> <name>]`. */
function reminderCommand(
  target: Target,
  args: string[],
  limit: string | undefined,
  after: string | undefined,
): Promise<commands.Output> {
  const [sub, ...rest] = args;
  if (sub === undefined) return reminders.summary(target);
  if (sub === 'list' && rest.length === 2 && limit === undefined && after === undefined) {
    return reminders.ofGrain(target, rest[0]!, rest[1]!);
  }
  if (sub === 'list' && rest.length === 1) {
    return reminders.ofKind(target, rest[0]!, positiveInt(limit, 1000, '--limit'), after);
  }
  if (sub === 'remove' && rest.length === 3) {
    return reminders.remove(target, rest[0]!, rest[1]!, rest[2]!);
  }
  throw new CliExit(
    EXIT.usage,
    'usage: granary reminders [list <kind> [<id>] [--limit N] [--after CURSOR] | remove <kind> <id> <name>]',
  );
}

function positiveInt(v: string | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0)
    throw new CliExit(EXIT.usage, `${name} must be a positive integer`);
  return n;
}

/**
 * `call` takes its request as `--json '{...}'`, while `--json` alone means "print JSON" for the
 * other commands: the request is taken out before the flags are parsed.
 */
function takeCallJson(argv: string[]): { argv: string[]; request: string | undefined } {
  if (argv.find((a) => !a.startsWith('-')) !== 'call') return { argv, request: undefined };
  const out: string[] = [];
  let request: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--json=')) request = a.slice('--json='.length);
    else if (a === '--json' && i + 1 < argv.length) request = argv[++i];
    else out.push(a);
  }
  return { argv: out, request };
}
