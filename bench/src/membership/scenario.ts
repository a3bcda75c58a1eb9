/**
 * One expensive run (a storm on a fresh etcd) measures several figures; the harness asks for
 * them one case at a time. A scenario runs once per repetition, when the first of its cases asks
 * for that repetition, and every case reads its own figure from that run.
 */
export function scenario<T>(
  run: () => Promise<T>,
): (pick: (t: T) => number) => () => Promise<number> {
  const results: Array<Promise<T>> = [];
  return (pick) => {
    let calls = 0;
    return async () => {
      const i = calls++;
      while (results.length <= i) results.push(run());
      return pick(await results[i]!);
    };
  };
}
