/**
 * One code hook (a `HookCallback` registered on the worker): called with the SDK's input, bounded
 * by its matcher's timeout, told to stop through its AbortSignal, its answer reduced to decision
 * fields like a command's JSON.
 */
import type { HookCallback, HookInput } from '../../shared/hook-callbacks';
import type { HookRun } from '../../shared/hooks';
import { couldNotRun, HOOK_DEFAULT_TIMEOUT_S } from './command';
import { decisionFields } from './output';

export interface CodeHookRequest {
  name: string;
  callback: HookCallback;
  input: HookInput;
  toolUseId: string | undefined;
  timeoutS?: number;
  signal: AbortSignal;
  /** Where a thrown error's message goes (the worker's log, not history). */
  logError(message: string): void;
}

export async function runCodeHook(req: CodeHookRequest): Promise<HookRun> {
  const started = Date.now();
  const run = (r: Omit<HookRun, 'hook' | 'durationMs'>): HookRun => ({ hook: req.name, durationMs: Date.now() - started, ...r });
  const timeoutS = req.timeoutS ?? HOOK_DEFAULT_TIMEOUT_S;
  const abort = new AbortController();
  const onCancel = () => abort.abort(req.signal.reason);
  req.signal.addEventListener('abort', onCancel, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      resolve('timeout'); // before the abort below settles `cancelled`
      abort.abort(new Error(`hook timed out after ${timeoutS} s`));
    }, timeoutS * 1000);
  });
  const cancelled = new Promise<'cancelled'>((resolve) =>
    abort.signal.addEventListener('abort', () => resolve('cancelled'), { once: true }),
  );
  try {
    const answer = await Promise.race([req.callback(req.input, req.toolUseId, { signal: abort.signal }), timedOut, cancelled]);
    if (answer === 'timeout') {
      // As for a command hook: a PreToolUse guard that did not answer denies the call.
      const error = `timed out after ${timeoutS} s`;
      const block = req.input.hook_event_name === 'PreToolUse' ? { blockReason: couldNotRun(req.name, error) } : {};
      return run({ outcome: 'timeout', exitCode: null, error, ...block });
    }
    if (answer === 'cancelled') return run({ outcome: 'error', exitCode: null, error: 'cancelled' });
    if (answer === undefined || answer === null) return run({ outcome: 'success', exitCode: null });
    if (typeof answer === 'object' && 'async' in answer && answer.async === true) return run({ outcome: 'success', exitCode: null });
    const filtered = decisionFields(answer);
    if ('problem' in filtered) return run({ outcome: 'error', exitCode: null, error: `invalid output: ${filtered.problem}` });
    return run({ outcome: 'success', exitCode: null, ...(Object.keys(filtered.output).length ? { output: filtered.output } : {}) });
  } catch (e) {
    // The message may quote anything the callback touched: it goes to the worker's log only.
    req.logError(`${req.name} threw: ${(e as Error)?.stack ?? String(e)}`);
    return run({ outcome: 'error', exitCode: null, error: "threw an error (its message is in the worker's log)" });
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener('abort', onCancel);
  }
}
