import { ClusterError } from '../errors';

/**
 * Errors of threaded kinds (`threaded()`). Each has a fixed `name` and `code`; a grain call to a
 * threaded kind reaches its caller as a GrainError carrying that name and code, exactly as if the
 * grain had thrown it on the main thread.
 */

/** Base of the errors a threaded kind raises on its own (not the handler's). */
export class ThreadError extends ClusterError {
  override readonly name: string = 'ThreadError';
  override readonly code: string = 'ERR_THREAD';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The handler threw (or rejected) in its worker thread. `name`, `code` and `message` are the
 * handler's error's, so callers see the GrainError they would see without threads; `stack` is the
 * thread's.
 */
export class ThreadHandlerError extends ThreadError {
  override readonly name: string;
  override readonly code: string;
  constructor(name: string, code: string | undefined, message: string, stack: string | undefined) {
    super(message);
    this.name = name;
    this.code = code ?? 'ERR_GRAIN';
    if (stack !== undefined) this.stack = stack;
  }
}

/**
 * The task's deadline passed (or it was cancelled) before the handler answered: a queued task was
 * dropped; a running one had its thread terminated (the only way to stop synchronous code), and a
 * fresh thread takes its place.
 */
export class ThreadTaskAbortedError extends ThreadError {
  override readonly name = 'ThreadTaskAbortedError';
  override readonly code = 'ERR_THREAD_TASK_ABORTED';
  constructor(what: string, why: string, options?: { cause?: unknown }) {
    super(`${what}: the task in a worker thread was aborted (${why})`, options);
  }
}

/** A worker thread died under the task (process.exit in the handler, out of memory, a crash). */
export class ThreadCrashedError extends ThreadError {
  override readonly name = 'ThreadCrashedError';
  override readonly code = 'ERR_THREAD_CRASHED';
  constructor(what: string, options?: { cause?: unknown }) {
    const m = (options?.cause as { message?: string } | undefined)?.message;
    super(`${what}: the worker thread running the task died${m ? ` (${m})` : ''}`, options);
  }
}

/**
 * The message, or the handler's reply, cannot cross the thread boundary: only values the
 * structured clone algorithm copies do (no functions, no class prototypes, no sockets).
 */
export class ThreadCloneError extends ThreadError {
  override readonly name = 'ThreadCloneError';
  override readonly code = 'ERR_THREAD_CLONE';
  constructor(what: string, direction: 'message' | 'reply', options?: { cause?: unknown }) {
    const m = (options?.cause as { message?: string } | undefined)?.message;
    super(
      `${what}: the ${direction} cannot cross to${direction === 'reply' ? ' the main thread' : ' a worker thread'} (structured clone${m ? `: ${m}` : ''})`,
      options,
    );
  }
}

/** The member's threads for the kind were closed (its last activation ended, or shutdown). */
export class ThreadPoolClosedError extends ThreadError {
  override readonly name = 'ThreadPoolClosedError';
  override readonly code = 'ERR_THREAD_POOL_CLOSED';
  constructor(what: string) {
    super(`${what}: the member's worker threads for this kind are closed`);
  }
}
