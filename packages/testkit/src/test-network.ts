import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { isAlive } from './cleanup';
import { TestkitError } from './errors';

/** Prefix of every namespace this module makes: `granary-<owner pid>-<host index>`. */
const NS_PREFIX = 'granary-';
const IP = '/usr/sbin/ip';

/** One test host: a network namespace with one address on the test network. */
export interface TestHost {
  /** The namespace's name. */
  readonly ns: string;
  /** The host's address on the test network. */
  readonly ip: string;
  /** Command prefix that runs a program inside the host (`ip netns exec <ns>`). */
  readonly exec: readonly string[];
}

/** A private network of test hosts on this machine, for partition tests. */
export interface TestNetwork {
  /** This (the root) namespace's address on the network: servers here listen on it. */
  readonly gateway: string;
  readonly hosts: readonly TestHost[];
  /** Cuts host `i` off the network: its link goes down, packets both ways are dropped. */
  partition(i: number): void;
  /** Reconnects host `i`. */
  heal(i: number): void;
  /** Removes the hosts and the bridge. */
  close(): void;
}

/**
 * Why test hosts cannot be made here (not root, no `ip`), or undefined when they can. Tests that
 * need them skip with this reason.
 */
export function testNetworkUnavailable(): string | undefined {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'network namespaces need root';
  }
  if (!existsSync(IP)) return `${IP} is missing (Debian package iproute2)`;
  return undefined;
}

function ip(...args: string[]): void {
  execFileSync(IP, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Removes namespaces (and so their veth ends) left by test processes that died. */
function sweepStale(): void {
  const dir = '/run/netns';
  if (!existsSync(dir)) return;
  for (const ns of readdirSync(dir)) {
    const owner = Number(/^granary-(\d+)-/.exec(ns)?.[1]);
    if (owner > 0 && !isAlive(owner)) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // removed meanwhile
      }
    }
  }
  // Bridges and veth ends of dead owners: gb<pid in base 36>, gv<pid in base 36>x<i>.
  for (const link of readdirSync('/sys/class/net')) {
    const m = /^g[bv]([0-9a-z]+?)(x\d+)?$/.exec(link);
    if (m && !isAlive(parseInt(m[1], 36))) {
      try {
        ip('link', 'del', link);
      } catch {
        // removed meanwhile
      }
    }
  }
}

/**
 * Makes `count` test hosts, each a network namespace joined by a veth pair to a bridge in this
 * namespace, on a private /24 that exists only on this machine (10.200+ block, chosen from the
 * pid so parallel test processes do not collide). Processes started with a host's `exec` prefix
 * see only that network; `partition(i)` takes host i's link down (a silent partition: nothing
 * is reset, packets are dropped) and `heal(i)` brings it back. Needs root: check
 * {@link testNetworkUnavailable} first. Namespaces of test processes that died are removed on
 * the next call.
 *
 * @example
 * const net = startTestNetwork(4);
 * NodeProcess.spawn({ script, exec: net.hosts[0].exec, config: { host: net.hosts[0].ip } });
 * net.partition(0); // ... net.heal(0)
 * net.close();
 */
export function startTestNetwork(count: number): TestNetwork {
  const unavailable = testNetworkUnavailable();
  if (unavailable !== undefined) throw new TestkitError(`test network: ${unavailable}`);
  if (!Number.isInteger(count) || count < 1 || count > 200) {
    throw new TestkitError(`count must be an integer in [1, 200], got ${count}`);
  }
  sweepStale();
  const tag = process.pid.toString(36);
  const subnet = `10.${200 + (process.pid % 50)}.${(process.pid >> 6) % 250}`;
  const bridge = `gb${tag}`;
  const made: string[] = [];
  const hosts: TestHost[] = [];
  const close = (): void => {
    // The veth first: deleting a namespace frees its links only later, in the kernel's time.
    for (let i = 0; i < made.length; i++) {
      try {
        ip('link', 'del', `gv${tag}x${i}`);
      } catch {
        // never made, or already gone
      }
    }
    for (const ns of made) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
    try {
      ip('link', 'del', bridge);
    } catch {
      // already gone
    }
  };
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    for (let i = 0; i < count; i++) {
      const ns = `${NS_PREFIX}${process.pid}-${i}`;
      const outer = `gv${tag}x${i}`;
      ip('netns', 'add', ns);
      made.push(ns);
      ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      ip('link', 'set', outer, 'master', bridge);
      ip('link', 'set', outer, 'up');
      const addr = `${subnet}.${10 + i}`;
      ip('-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      hosts.push({ ns, ip: addr, exec: [IP, 'netns', 'exec', ns] });
    }
  } catch (err) {
    close();
    throw new TestkitError(`could not make the test network: ${String(err)}`, { cause: err });
  }
  const link = (i: number, state: 'up' | 'down'): void => {
    if (hosts[i] === undefined) throw new TestkitError(`no test host ${i}`);
    ip('link', 'set', `gv${tag}x${i}`, state);
  };
  return {
    gateway: `${subnet}.1`,
    hosts,
    partition: (i) => link(i, 'down'),
    heal: (i) => link(i, 'up'),
    close,
  };
}
