/**
 * The Temporal server's own work, read from its Prometheus endpoint (`--metrics-port`): requests
 * each service answered and storage operations it made, by operation, between two scrapes. The
 * throughput benchmark divides them by the turns run, so the two loops' cost to the server can be
 * compared call by call.
 */

/** `metric|service|operation` → count, summed over the other labels (namespace, task queue…). */
export type Counters = Map<string, number>;

const COUNTED = new Set(['service_requests', 'persistence_requests', 'service_errors', 'persistence_errors']);

function label(labels: string, name: string): string {
  return new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(labels)?.[1] ?? '';
}

/** Parse the counters we compare out of Prometheus text exposition. */
export function parseCounters(text: string): Counters {
  const out: Counters = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{([^}]*)\} ([0-9.e+]+)$/.exec(line);
    if (!m || !COUNTED.has(m[1]!)) continue;
    const key = `${m[1]}|${label(m[2]!, 'service_name')}|${label(m[2]!, 'operation')}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}

export async function scrape(url: string): Promise<Counters> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return parseCounters(await res.text());
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
