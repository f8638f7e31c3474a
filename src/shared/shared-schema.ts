/**
 * Our zod schemas, built once per worker thread instead of once per session
 * (ARCHITECTURE.md#shared-libraries).
 *
 * A worker thread evaluates every module of the workflow bundle again for each new workflow, so
 * each session built its own copy of every schema at module level (~0.4 MiB of heap kept for the
 * session's life, ~3 ms of its first workflow task). zod itself is preloaded and frozen, but a
 * frozen schema cannot be shared: zod caches derived fields on a schema on first use. So the
 * schemas live here instead, in a module the bundle preloads (src/workflows/preload.ts): its
 * exports are frozen, the map below is not (the SDK freezes what it can reach through
 * properties, not what a closure holds), and the first workflow to evaluate a schema module
 * builds each schema and leaves it for the rest.
 *
 * What may be shared: a value that is the same whichever session builds it and that no session
 * changes — a schema (parsing is deterministic; what zod caches on it is derived from the schema
 * alone), or plain data frozen by `sharedData`. Never anything that holds a session's state.
 *
 * Outside a preloaded bundle (Node: the client, the activities, tests; a bundle built without the
 * preload) each module is evaluated once per map, so a key seen twice is two call sites with the
 * same key — a mistake that would hand one site the other's schema — and throws.
 */

const built = new Map<string, unknown>();
let acrossWorkflows = false;

/**
 * Called by the bundle's preload, before any workflow exists: from then on a key seen before is
 * the same module evaluated again for another workflow, and gets the schema built the first time.
 */
export function shareAcrossWorkflows(): void {
  acrossWorkflows = true;
}

/** The schema under `key`, built by `build` the first time. Keys are `module.Name`, unique in the code base. */
export function sharedSchema<T>(key: string, build: () => T): T {
  if (built.has(key)) {
    if (!acrossWorkflows) throw new Error(`shared schema key '${key}' is used by two definitions`);
    return built.get(key) as T;
  }
  const value = build();
  built.set(key, value);
  return value;
}

/** Plain data (e.g. a schema's JSON Schema) shared like `sharedSchema`, frozen so no session can change it for the others. */
export function sharedData<T>(key: string, build: () => T): T {
  return sharedSchema(key, () => deepFreeze(build()));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
