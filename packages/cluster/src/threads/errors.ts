import { registerErrorClasses } from '@granary/core';
import { ClusterError } from '../errors';

/**
 * Errors of threaded kinds (`threaded()`). Each has a fixed `name` and `code`; a grain call to a
 * threaded kind reaches its caller as a GrainError carrying that name and code (as `originalName`
 * and `originalCode`), exactly as if the grain had thrown it on the main thread.
 */

/** Base of the errors a threaded kind raises on its own (not the handler's). */
export class ThreadError extends ClusterError {
  static override readonly code: string = 'ERR_THREAD';
  override readonly name: string = 'ThreadError';
}

/**
 * The handler threw (or rejected) in its worker thread. `originalName`, `originalCode` and
 * `message` are the handler's error's, and a grain call passes them on as its GrainError's, so
 * callers see the GrainError they would see without threads; `stack` is the thread's.
 */
export class ThreadHandlerError extends ThreadError {
  static override readonly code = 'ERR_THREAD_HANDLER';
  override readonly name = 'ThreadHandlerError';
  constructor(
    readonly originalName: string,
    readonly originalCode: string | undefined,
    message: string,
    stack: string | undefined,
  ) {
    super(message);
    if (stack !== undefined) this.stack = stack;
  }
}

/**
 * The task's deadline passed (or it was cancelled) before the handler answered: a queued task was
 * dropped; a running one had its thread terminated (the only way to stop synchronous code), and a
 * fresh thread takes its place.
 */
export class ThreadTaskAbortedError extends ThreadError {
  static override readonly code = 'ERR_THREAD_TASK_ABORTED';
  override readonly name = 'ThreadTaskAbortedError';
  constructor(what: string, why: string, options?: { cause?: unknown }) {
    super(`${what}: the task in a worker thread was aborted (${why})`, options);
  }
}

/** A worker thread died under the task (process.exit in the handler, out of memory, a crash). */
export class ThreadCrashedError extends ThreadError {
  static override readonly code = 'ERR_THREAD_CRASHED';
  override readonly name = 'ThreadCrashedError';
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
  static override readonly code = 'ERR_THREAD_CLONE';
  override readonly name = 'ThreadCloneError';
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
  static override readonly code = 'ERR_THREAD_POOL_CLOSED';
  override readonly name = 'ThreadPoolClosedError';
  constructor(what: string) {
    super(`${what}: the member's worker threads for this kind are closed`);
  }
}

registerErrorClasses(
  ThreadError,
  ThreadHandlerError,
  ThreadTaskAbortedError,
  ThreadCrashedError,
  ThreadCloneError,
  ThreadPoolClosedError,
);
