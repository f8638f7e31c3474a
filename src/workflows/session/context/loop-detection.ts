/**
 * Loop detection: a model that keeps making the same tool call, or keeps
 * cycling through the same two or three, is stuck; a warning injected before its next call
 * tells it so. Signatures are short strings, so the history is JSON-safe and small enough to
 * carry through continue-as-new. Pure.
 */
import type { ToolUseBlock } from '../../../shared/messages';

export interface LoopOptions {
  /** Repetitions that count as a loop. Default 3. */
  threshold?: number;
  /** How many of the most recent calls are looked at. Default 10. */
  window?: number;
}

export type LoopMatch =
  | { kind: 'repeat'; signature: string; toolName: string; count: number }
  /** `pattern`: the repeating sequence of signatures, oldest first; `count`: full repetitions. */
  | { kind: 'cycle'; pattern: string[]; toolNames: string[]; count: number };

/** Inputs whose canonical JSON is longer than this are represented by a hash. */
const MAX_INLINE_INPUT = 200;

/**
 * `Name {"a":1,"b":2}`: the tool name, a space, and the input as JSON with sorted keys (the raw
 * text when the arguments were not valid JSON). Long inputs become `Name #<hash>/<length>`, so
 * a repeated 100 KB Write does not put 100 KB in the workflow's state.
 */
export function callSignature(call: Pick<ToolUseBlock, 'name' | 'input' | 'raw_input'>): string {
  const json = call.raw_input ?? canonicalJson(call.input ?? {});
  return json.length <= MAX_INLINE_INPUT ? `${call.name} ${json}` : `${call.name} #${hash53(json)}/${json.length}`;
}

/** JSON with object keys sorted at every depth; undefined properties dropped, as JSON.stringify does. */
export function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (x !== null && typeof x === 'object') {
    const obj = x as Record<string, unknown>;
    const parts = Object.keys(obj)
      .sort()
      .filter((k) => obj[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(x) ?? 'null';
}

/**
 * Append one turn's calls to the per-turn history and drop turns that have left the window, so
 * the carried history stays bounded.
 */
export function recordTurn(history: string[][], calls: Pick<ToolUseBlock, 'name' | 'input' | 'raw_input'>[], window = 10): string[][] {
  const out = [...history, calls.map(callSignature)];
  let total = out.reduce((n, t) => n + t.length, 0);
  while (out.length > 1 && total - out[0]!.length >= window) total -= out.shift()!.length;
  return out;
}

/**
 * A loop involving the newest turn's calls, or null. Checked in this order: the last calls
 * form a cycle of 2 or 3 distinct signatures repeated `threshold` times; one of the newest
 * turn's signatures occurs `threshold` times among the last `window` calls. Calls in older
 * turns alone never match, so a loop already warned about is reported again only if the model
 * repeats it again.
 */
export function detectLoop(history: readonly (readonly string[])[], opts: LoopOptions = {}): LoopMatch | null {
  const threshold = opts.threshold ?? 3;
  const window = opts.window ?? 10;
  const newest = history[history.length - 1] ?? [];
  if (newest.length === 0 || threshold < 2) return null;
  const calls = history.flat().slice(-window);

  for (const p of [2, 3]) {
    const cycle = cycleOf(calls, p, threshold);
    if (cycle) return cycle;
  }
  let best: { signature: string; count: number } | null = null;
  for (const sig of new Set(newest)) {
    const count = calls.filter((c) => c === sig).length;
    if (count >= threshold && (!best || count > best.count)) best = { signature: sig, count };
  }
  return best ? { kind: 'repeat', ...best, toolName: toolNameOf(best.signature) } : null;
}

function cycleOf(calls: string[], p: number, threshold: number): LoopMatch | null {
  if (calls.length < p * threshold) return null;
  const pattern = calls.slice(-p);
  if (new Set(pattern).size !== p) return null;
  let matched = p;
  while (matched < calls.length && calls[calls.length - 1 - matched] === pattern[p - 1 - (matched % p)]) matched++;
  const count = Math.floor(matched / p);
  if (count < threshold) return null;
  return { kind: 'cycle', pattern, toolNames: pattern.map(toolNameOf), count };
}

function toolNameOf(signature: string): string {
  const space = signature.indexOf(' ');
  return space === -1 ? signature : signature.slice(0, space);
}

/** cyrb53: a fast, well-mixed 53-bit string hash (not cryptographic; collisions only blur a warning). */
function hash53(s: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
}
