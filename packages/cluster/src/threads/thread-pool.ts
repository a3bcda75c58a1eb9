import * as path from 'node:path';
import type { Logger } from '@granary/core';
import type Piscina from 'piscina';
import {
  ThreadCloneError,
  ThreadCrashedError,
  ThreadHandlerError,
  ThreadPoolClosedError,
  ThreadTaskAbortedError,
} from './errors';
import type { ResolvedThreadedOptions } from './threaded-options';
import type { ThreadModuleSpec, ThreadResult, ThreadTask } from './thread-protocol';

/** The compiled worker-side module (next to this file in dist). */
const ENTRY = path.join(__dirname, 'thread-entry.js');

/** A task that runs no handler: posted only to make piscina start a thread (see `refill`). */
const WAKE: ThreadTask = {
  message: undefined,
  kind: '',
  identity: '',
  activationId: '',
  deadline: null,
  wake: true,
};

/** One call to run in a thread: its identity, deadline and cancellation. */
export interface ThreadCall {
  readonly kind: string;
  readonly identity: string;
  readonly activationId: string;
  /** Epoch ms; Infinity when the call has none. */
  readonly deadline: number;
  /** Aborts the task: dropped if queued, its thread terminated if running. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * piscina, loaded with a member's first threaded kind: most members host none, and its modules
 * (and the worker machinery they set up) stay out of their processes.
 */
function loadPiscina(): typeof Piscina {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  return (require('piscina') as { Piscina: typeof Piscina }).Piscina;
}

/**
 * One member's worker threads for one threaded kind (piscina: at most `threads` threads, started
 * on demand, idle ones exit). `run` hands a message to a free thread (or queues it in order) and
 * maps every way a task can end to a reply or a typed error.
 */
export class ThreadPool {
  private readonly piscina: Piscina<ThreadTask, ThreadResult>;
  private closed = false;

  constructor(
    options: ResolvedThreadedOptions,
    /** Where a thread's failure outside any task is reported (the member's). */
    private readonly logger?: Logger,
  ) {
    const spec: ThreadModuleSpec = { module: options.module, exportName: options.export };
    this.piscina = new (loadPiscina())({
      filename: ENTRY,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: options.idleTimeoutMs,
      maxQueue: Infinity,
      concurrentTasksPerWorker: 1,
      recordTiming: false,
      workerData: spec,
      ...(options.maxHeapMb === undefined
        ? {}
        : { resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb } }),
    });
    // A thread that fails with no task on it (an exception after its handler returned): piscina
    // emits 'error', which with no listener would throw and end the member. Nothing waits on
    // that thread; piscina replaces it, so it is reported and the pool goes on.
    this.piscina.on('error', (err: unknown) =>
      this.logger?.error({ err }, 'a worker thread failed outside any task; it is replaced'),
    );
    // After piscina's own bookkeeping of the ended thread (it emits this before forgetting it).
    this.piscina.on('workerDestroy', () => queueMicrotask(() => this.refill()));
  }

  /** Threads running now (for tests and stats). */
  get threadCount(): number {
    return this.piscina.threads.length;
  }

  /** Runs `message` in a thread; resolves with the handler's reply. */
  async run(message: unknown, call: ThreadCall): Promise<unknown> {
    const what = `${call.kind}/${call.identity}`;
    if (this.closed) throw new ThreadPoolClosedError(what);
    const task: ThreadTask = {
      message,
      kind: call.kind,
      identity: call.identity,
      activationId: call.activationId,
      deadline: Number.isFinite(call.deadline) ? call.deadline : null,
    };
    let result: ThreadResult;
    try {
      result = await this.piscina.run(task, { signal: call.signal ?? null });
    } catch (err) {
      throw this.failure(what, err, call.signal);
    }
    if (result.ok) return result.value;
    if (result.clone === true) {
      throw new ThreadCloneError(what, 'reply', { cause: new Error(result.message) });
    }
    throw new ThreadHandlerError(result.name, result.code, result.message, result.stack);
  }

  /** Terminates the threads; queued and running tasks fail with ThreadPoolClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.piscina.destroy();
  }

  /**
   * piscina starts a thread only when a task is handed to it: when a crash or a deadline ends a
   * thread while other tasks wait in its queue, nothing starts a replacement, and with every
   * thread gone those tasks sat until their own deadlines although no thread was busy. A WAKE
   * task, queued behind them, starts one; they run first, in their order.
   */
  private refill(): void {
    if (this.closed || this.piscina.queueSize === 0) return;
    // It fails only when close() destroys the pool first; the tasks it was for fail with that.
    this.piscina.run(WAKE).catch(() => undefined);
  }

  private failure(what: string, err: unknown, signal: AbortSignal | undefined): Error {
    const name = (err as { name?: string } | undefined)?.name;
    if (name === 'DataCloneError') {
      // Thrown by postMessage on this side: the message (the entry checks the reply).
      return new ThreadCloneError(what, 'message', { cause: err });
    }
    if (signal?.aborted === true || name === 'AbortError') {
      const reason = signal?.reason as { message?: string } | undefined;
      return new ThreadTaskAbortedError(what, reason?.message ?? 'cancelled', { cause: err });
    }
    if (this.closed) return new ThreadPoolClosedError(what);
    return new ThreadCrashedError(what, { cause: err });
  }
}
