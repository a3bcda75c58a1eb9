// The module piscina runs in each worker thread of a threaded kind: loads the user's handler once
// per thread, runs one task per call, and answers a ThreadResult (errors as plain fields). It
// imports nothing of Granary's main side: a thread stays small and starts fast.
import { workerData } from 'node:worker_threads';
import type {
  ThreadHandler,
  ThreadModuleSpec,
  ThreadResult,
  ThreadTask,
  ThreadTaskContext,
} from './thread-protocol';

/** piscina passes its `workerData` option through as the thread's workerData. */
const spec = workerData as ThreadModuleSpec;

let loaded: ThreadHandler | undefined;

function handlerOf(): ThreadHandler {
  if (loaded !== undefined) return loaded;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path chosen at run time
  const mod = require(spec.module) as Record<string, unknown>;
  const fn = mod[spec.exportName] ?? mod.default ?? (typeof mod === 'function' ? mod : undefined);
  if (typeof fn !== 'function') {
    throw new TypeError(
      `threaded(): module ${spec.module} exports no function '${spec.exportName}' nor a default (export option)`,
    );
  }
  return (loaded = fn as ThreadHandler);
}

function contextOf(task: ThreadTask, signal: AbortSignal): ThreadTaskContext {
  const deadline = task.deadline ?? Infinity;
  return {
    kind: task.kind,
    identity: task.identity,
    activationId: task.activationId,
    deadline,
    get remainingMs() {
      return Math.max(0, deadline - Date.now());
    },
    signal,
  };
}

function failure(err: unknown): ThreadResult {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  return {
    ok: false,
    name: e.name,
    code: typeof code === 'string' ? code : undefined,
    message: e.message,
    stack: e.stack,
  };
}

/**
 * True when `value` can be posted back. piscina posts the reply after this module returns, and a
 * reply that cannot be cloned kills the thread with an empty error; checked here so the caller
 * gets ThreadCloneError instead. Objects only (primitives always clone); the extra copy costs
 * about what the post itself does, small next to a turn worth a thread.
 */
function cloneable(value: unknown): boolean {
  if (typeof value === 'function' || typeof value === 'symbol') return false;
  if (value === null || typeof value !== 'object') return true;
  try {
    structuredClone(value);
    return true;
  } catch {
    return false;
  }
}

function notCloneable(value: unknown): ThreadResult {
  let message: string;
  try {
    structuredClone(value);
    message = `${typeof value} could not be cloned`;
  } catch (err) {
    message = (err as Error).message;
  }
  return {
    ok: false,
    name: 'DataCloneError',
    code: undefined,
    message,
    stack: undefined,
    clone: true,
  };
}

/** One task: the handler's reply or its error, never a throw (piscina would lose `code`). */
export default async function run(task: ThreadTask): Promise<ThreadResult> {
  if (task.wake === true) return { ok: true, value: undefined };
  const abort = new AbortController();
  const remaining = task.deadline === null ? Infinity : task.deadline - Date.now();
  // Only an awaiting handler ever sees this fire; a synchronous one is stopped from outside.
  const timer = Number.isFinite(remaining)
    ? setTimeout(() => abort.abort(new Error('deadline passed')), Math.max(0, remaining))
    : undefined;
  try {
    const value = await handlerOf()(task.message, contextOf(task, abort.signal));
    return cloneable(value) ? { ok: true, value } : notCloneable(value);
  } catch (err) {
    return failure(err);
  } finally {
    clearTimeout(timer);
  }
}
