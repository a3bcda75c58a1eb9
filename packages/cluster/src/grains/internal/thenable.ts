/** A thenable: a turn or a hook that returned one is awaited. */
export function isPromise(v: unknown): v is Promise<unknown> {
  return (
    v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function'
  );
}
