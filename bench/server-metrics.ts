/**
 * The Temporal server's own work, read from its Prometheus endpoint (`--metrics-port`): requests
 * each service answered, storage operations it made (and the time they took), background tasks it
 * ran, by operation, between two scrapes. The throughput benchmark divides them by the turns run,
 * so the two loops' cost to the server can be compared call by call.
 */

/** `metric|service|operation` → count, summed over the other labels (namespace, task queue…). */
export type Counters = Map<string, number>;

const COUNTED = new Set([
  'service_requests',
  'service_errors',
  'persistence_requests',
  'persistence_errors',
  'visibility_persistence_requests',
  // Background tasks the history service ran (transfer, timer and visibility queues), by type.
  'task_requests',
  // The history service's caches (workflow state, events): a miss is a read from storage.
  'cache_requests',
  'cache_miss',
  // Tasks matching handed to a waiting poller (sync) rather than writing them to storage first.
  'poll_success',
  'poll_success_sync',
]);
/** Time spent in storage, summed over calls (seconds in the exposition, kept as ms). */
const TIMED: Record<string, string> = {
  persistence_latency_sum: 'persistence_ms',
  visibility_persistence_latency_sum: 'visibility_persistence_ms',
};

function label(labels: string, name: string): string {
  return new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(labels)?.[1] ?? '';
}

/** Parse the counters we compare out of Prometheus text exposition. */
export function parseCounters(text: string): Counters {
  const out: Counters = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{([^}]*)\} ([0-9.e+]+)$/.exec(line);
    if (!m) continue;
    const timed = TIMED[m[1]!];
    if (!timed && !COUNTED.has(m[1]!)) continue;
    const key = `${timed ?? m[1]}|${label(m[2]!, 'service_name')}|${label(m[2]!, 'operation')}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]) * (timed ? 1000 : 1));
  }
  return out;
}

export async function scrape(url: string): Promise<Counters> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return parseCounters(await res.text());
}

/** The counters of several endpoints (a cluster's nodes), summed. */
export async function scrapeAll(urls: string[]): Promise<Counters> {
  const out: Counters = new Map();
  for (const c of await Promise.all(urls.map(scrape))) for (const [k, v] of c) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

export function diff(after: Counters, before: Counters): Counters {
  const out: Counters = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

/** Sum of every counter of one metric (e.g. all storage operations). */
export function total(c: Counters, metric: string): number {
  let n = 0;
  for (const [k, v] of c) if (k.startsWith(`${metric}|`)) n += v;
  return n;
}
