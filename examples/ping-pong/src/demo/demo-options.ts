import type { ProviderName } from '../config';
import { DemoOptionError } from '../errors';

/** Options of the demo runner (`npm run demo -- --seconds 30 --kill-after 5`). */
export interface DemoOptions {
  /**
   * How long the cluster runs before the runner stops every node gracefully, in seconds.
   * @default 20
   */
  seconds: number;
  /**
   * Seconds after start at which the ponger node hosting `ponger-1` is SIGKILLed, to show
   * failover; the runner then prints how long pongs paused.
   * @default undefined (nothing is killed)
   */
  killAfter: number | undefined;
  /**
   * Membership provider: `seed` (a seed node process, no dependencies) or `etcd`.
   * @default 'seed'
   */
  provider: ProviderName;
  /**
   * etcd endpoints (comma-separated) for `--provider etcd`.
   * @default []
   */
  etcd: string[];
  /**
   * Redis for the ponger nodes (their grains' state and the durable reminders of the digest
   * grain): `auto` starts a private `redis-server` from PATH for the run (reminders are off,
   * said once, when there is none), `off` runs without Redis, else a `redis://` URL to use.
   * @default 'auto'
   */
  redis: string;
}

/** Defaults of DemoOptions. */
export const DEFAULT_DEMO_OPTIONS: DemoOptions = {
  seconds: 20,
  killAfter: undefined,
  provider: 'seed',
  etcd: [],
  redis: 'auto',
};

/** The runner's usage text, printed with `--help` and with every option error. */
export const DEMO_USAGE = `usage: npm run demo -- [--seconds <s>] [--kill-after <s>] [--provider seed|etcd] [--etcd <url,...>] [--redis auto|off|<url>]

  --seconds <s>        stop every node gracefully after <s> seconds (default 20; Ctrl-C stops earlier)
  --kill-after <s>     SIGKILL the ponger node hosting ponger-1 after <s> seconds and print the pause
  --provider <name>    membership: seed (default, no dependencies) or etcd
  --etcd <url,...>     etcd endpoints for --provider etcd, e.g. http://127.0.0.1:2379
  --redis <r>          Redis of the ponger nodes (grain state, durable reminders): auto (default,
                       a private redis-server from PATH for the run), off, or a redis:// URL
`;

/** Parses the runner's arguments; throws DemoOptionError naming the bad option. */
export function parseDemoOptions(argv: readonly string[]): DemoOptions {
  const options: DemoOptions = { ...DEFAULT_DEMO_OPTIONS, etcd: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s) : [arg];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v.startsWith('--')) {
        throw new DemoOptionError(flag, `${flag} needs a value\n${DEMO_USAGE}`);
      }
      return v;
    };
    const seconds = (): number => {
      const raw = value();
      const n = Number(raw);
      if (!Number.isFinite(n) || n <= 0) {
        throw new DemoOptionError(flag, `${flag} must be a number of seconds > 0, got '${raw}'`);
      }
      return n;
    };
    if (flag === '--seconds') options.seconds = seconds();
    else if (flag === '--kill-after') options.killAfter = seconds();
    else if (flag === '--provider') {
      const p = value();
      if (p !== 'seed' && p !== 'etcd') {
        throw new DemoOptionError(flag, `--provider must be seed or etcd, got '${p}'`);
      }
      options.provider = p;
    } else if (flag === '--etcd') {
      options.etcd = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    } else if (flag === '--redis') {
      const r = value();
      if (r !== 'auto' && r !== 'off' && !/^rediss?:\/\//.test(r)) {
        throw new DemoOptionError(flag, `--redis must be auto, off or a redis:// URL, got '${r}'`);
      }
      options.redis = r;
    } else throw new DemoOptionError(flag, `unknown option ${flag}\n${DEMO_USAGE}`);
  }
  if (options.provider === 'etcd' && options.etcd.length === 0) {
    throw new DemoOptionError(
      '--etcd',
      '--provider etcd needs --etcd <url>, e.g. http://127.0.0.1:2379',
    );
  }
  if (options.provider === 'seed' && options.etcd.length > 0) {
    throw new DemoOptionError('--etcd', '--etcd is only used with --provider etcd');
  }
  if (options.killAfter !== undefined && options.killAfter >= options.seconds) {
    throw new DemoOptionError(
      '--kill-after',
      `--kill-after (${options.killAfter}) must be less than --seconds (${options.seconds})`,
    );
  }
  return options;
}
