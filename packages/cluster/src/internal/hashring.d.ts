// hashring ships no types; this is the part of its API the placement code uses.
declare module 'hashring' {
  type Servers = string | string[] | Record<string, number | { weight?: number; vnodes?: number }>;
  interface HashRingOptions {
    'vnode count'?: number;
    'max cache size'?: number;
    compatibility?: 'hash_ring';
    'default port'?: number;
  }
  class HashRing {
    constructor(servers?: Servers, algorithm?: string, options?: HashRingOptions);
    get(key: string): string | undefined;
    range(key: string, size?: number, unique?: boolean): string[];
  }
  export = HashRing;
}
