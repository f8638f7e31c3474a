/** Something a whole test file shares, started before its first test and closed after its last. */

/**
 * Registers `beforeAll(start)` and `afterAll(close)`, and returns an object that stands for what
 * `start` made, from the first test on (using it before then throws, naming `what`).
 */
export function perFile<T extends object>(what: string, start: () => Promise<T>, close: (t: T) => Promise<unknown>, timeoutMs?: number): T {
  let current: T | undefined;
  beforeAll(async () => {
    current = await start();
  }, timeoutMs);
  afterAll(async () => {
    if (current) await close(current);
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (!current) throw new Error(`${what}.${String(key)} used before the test file's beforeAll ran`);
      const value: unknown = Reflect.get(current, key, current);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(current) : value;
    },
  });
}
