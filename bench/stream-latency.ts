/**
 * Benchmark 6 — live tokens (ARCHITECTURE.md#live-tokens): the latency streaming adds between the
 * provider sending a chunk and a `query()`-style reader receiving its `stream_event`.
 *
 *   npx tsx bench/stream-latency.ts [--sessions 5] [--words 60] [--chunk-delay-ms 25]
 *
 * A worker in its own process (`bench/worker-process.ts`) streams each reply from the scripted
 * model (in this process, which records when it handed each chunk to the socket) and serves it
 * on its live server; this process reads the sessions with `includePartialMessages` and notes
 * when each text delta reaches the loop that consumes it. Both clocks are this machine's.
 * Reported: per text chunk, receipt − send (all chunks; then the first chunk of each reply,
 * which waits for the client to find the call, and the rest). Target: ≤ 150 ms median.
 */
import { parseArgs } from 'node:util';
import { turn } from '../src/testing/scripted-model';
import { load, machine, median, ms, percentile, spawnBenchWorker, startBenchStack, table, writeBundle } from './lib';

const now = () => performance.timeOrigin + performance.now();

export async function streamLatency(opts: { sessions: number; words: number; chunkDelayMs: number }): Promise<void> {
  const loadBefore = load();
  const { stack, model, dir } = await startBenchStack();
  const worker = spawnBenchWorker({ address: stack.address, modelUrl: model.url, bundlePath: await writeBundle(dir) });
  const client = stack.client;
  const all: number[] = [];
  const first: number[] = [];
  const rest: number[] = [];
  try {
    await worker.ready;
    for (let i = 0; i < opts.sessions + 1; i++) {
      const name = `stream-${i}`;
      const text = Array.from({ length: opts.words }, (_, w) => `w${w}`).join(' ');
      model.addScenario({ name, turns: [turn.text(text, { chunk_delay_ms: opts.chunkDelayMs })] });
      const session = await client.start({ prompt: `[scenario:${name}] Talk.`, cwd: dir, permissionMode: 'bypassPermissions' });
      const received: number[] = [];
      for await (const m of session.messages({ includePartialMessages: true })) {
        if (m.type === 'stream_event' && m.event.type === 'content_block_delta' && m.event.delta.type === 'text_delta')
          received.push(now());
        if (m.type === 'result' && m.subtype !== 'success') throw new Error(`${name} ended ${m.subtype}`);
      }
      const sent = model.requests.find((r) => r.scenario === name)?.chunkTimes ?? [];
      // Chunk 0 is the role chunk; chunks 1..words carry one word each.
      if (received.length !== opts.words) throw new Error(`${name}: ${received.length} text deltas for ${opts.words} words`);
      if (i === 0) continue; // warm-up: the first session pays for connections and code loading
      received.forEach((t, k) => {
        const d = t - sent[k + 1]!;
        all.push(d);
        (k === 0 ? first : rest).push(d);
      });
    }
  } finally {
    await worker.stop();
    await stack.close();
  }
  const row = (name: string, xs: number[]) => [name, xs.length, ms(median(xs)), ms(percentile(xs, 90)), ms(Math.max(...xs))];
  console.log(`\n# Live tokens: added latency, provider chunk sent → stream_event received`);
  console.log(`${machine()}; ${loadBefore} before, ${load()} after`);
  console.log(
    `${opts.sessions} sessions (after a warm-up one), ${opts.words} words each, one chunk per word every ${opts.chunkDelayMs} ms; worker in its own process\n`,
  );
  console.log(
    table([
      ['chunks', 'n', 'median', 'p90', 'max'],
      row('all text chunks', all),
      row("each reply's first", first),
      row('the others', rest),
    ]),
  );
  const verdict = median(all) <= 150 ? 'met' : 'NOT met';
  console.log(`\nTarget ≤ 150 ms median: ${verdict} (${ms(median(all))}).`);
}

if (require.main === module) {
  const { values } = parseArgs({
    options: { sessions: { type: 'string' }, words: { type: 'string' }, 'chunk-delay-ms': { type: 'string' } },
  });
  streamLatency({
    sessions: Number(values.sessions ?? 5),
    words: Number(values.words ?? 60),
    chunkDelayMs: Number(values['chunk-delay-ms'] ?? 25),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
