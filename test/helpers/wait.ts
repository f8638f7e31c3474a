/** Waiting on state, never on time: the one polling helper every test uses. */

export interface WaitOptions {
  /** A backstop for a failure, never a window the test relies on (default 60 s). */
  timeoutMs?: number;
  everyMs?: number;
  /** Treat a probe that throws as "not yet" (e.g. a query while the server restarts); the last
   *  error is named if the wait times out. By default a throwing probe fails the wait at once. */
  ignoreErrors?: boolean;
}

/** Poll `probe` until it returns a value other than undefined/false; fail naming what was awaited.
 *  `options` may be just the timeout in ms. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions | number = {},
): Promise<T> {
  const { timeoutMs = 60_000, everyMs = 25, ignoreErrors = false } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      if (!ignoreErrors) throw e;
      lastError = e;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message.split('\n')[0]})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
