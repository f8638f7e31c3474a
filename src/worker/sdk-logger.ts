/**
 * The Temporal SDK warns "No activities registered" / "No workflows registered" for every worker
 * that polls one kind of task. Ours do so by design (ARCHITECTURE.md#the-shape: workflows on one
 * queue, model calls and tools on queues of their own), so those two warnings say nothing to an
 * operator. They are dropped here for exactly the queues createWorker set up for one kind of
 * task; every other message, and those warnings for any other worker, still go to the logger.
 */
import { Runtime, type LogLevel, type LogMetadata, type Logger } from '@temporalio/worker';

const NO_ACTIVITIES = 'No activities registered, not polling for activity tasks';
const NO_WORKFLOWS = 'No workflows registered, not polling for workflow tasks';

/** Task queues createWorker polls for one kind of task: the warning each may drop. */
const expected = new Map<string, string>();

class OneKindWorkersLogger implements Logger {
  flush?: () => void;
  close?: () => void;

  constructor(readonly inner: Logger & { flush?: () => void; close?: () => void }) {
    // The runtime flushes (and at shutdown closes) a buffering logger: keep that working.
    if (typeof inner.flush === 'function') {
      this.flush = () => inner.flush!();
      this.close = () => inner.close?.();
    }
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (level === 'WARN' && typeof meta?.taskQueue === 'string' && expected.get(meta.taskQueue) === message) return;
    this.inner.log(level, message, meta);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * Call before `Worker.create` for a worker that polls only `kind` on `taskQueue`. Wraps the
 * runtime's logger once (whoever installed it keeps their level and output): a worker takes
 * its logger from the runtime when it is created.
 */
export function expectOneKindWorker(taskQueue: string, kind: 'workflows' | 'activities'): void {
  expected.set(taskQueue, kind === 'workflows' ? NO_ACTIVITIES : NO_WORKFLOWS);
  const runtime = Runtime.instance();
  if (runtime.logger instanceof OneKindWorkersLogger) return;
  // `logger` is typed readonly, but it is a plain field the SDK reads when each worker is created.
  (runtime as { logger: Logger }).logger = new OneKindWorkersLogger(runtime.logger);
}
