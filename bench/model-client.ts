/**
 * Benchmark 11 — what one streamed model call costs the worker's CPU, by client: our own
 * (src/activities/model/chat-stream.ts, what `callModel` uses) against the `openai` client it replaced
 * (ARCHITECTURE.md#model-stream-client). The same request — the real tool specs, a system prompt
 * and a user message, ≈ 8.5 kB — to the scripted model in a process of its own (`durable-agent
 * scripted-model`), so only the client's side is counted; a tool-call reply of a few chunks read
 * to the end. Rounds alternate the two clients so load drift hits both alike; the first is a warm-up.
 *
 *   npx tsx bench/model-client.ts [--calls 2000] [--concurrency 20] [--rounds 4]
 *
 * CPU is this process's (user + system, every thread) over a round, divided by its calls.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { ChatStreamClient } from '../src/activities/model/chat-stream';
import { toChatMessages, toChatTools } from '../src/activities/model/chat-format';
import { createToolRegistry } from '../src/activities/tools';
import { load, machine, median, table } from './lib';

type Call = () => Promise<number>;

export async function modelClient(opts: { calls: number; concurrency: number; rounds: number }): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'da-bench-client-'));
  const scenario = path.join(dir, 'reply.json');
  const reply = { tool_calls: [{ name: 'Read', arguments: { file_path: '/work/notes.txt' } }] };
  writeFileSync(scenario, JSON.stringify({ name: 'reply', turns: [reply] }));
  const provider = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', path.join(__dirname, '..', 'src', 'cli', 'main.ts'), 'scripted-model', '--scenario', scenario],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      provider.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim()));
      provider.once('exit', (code) => reject(new Error(`the scripted model exited (${code}) before it listened`)));
    });
    const body: ChatCompletionCreateParamsStreaming = {
      model: 'scripted/reply',
      messages: toChatMessages('You are a coding agent working in a repository. '.repeat(30), [
        { role: 'user', content: [{ type: 'text', text: 'Read the notes.' }] },
      ]),
      tools: toChatTools(createToolRegistry().specs()),
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 4_096,
    };
    const ours = new ChatStreamClient({ baseURL: url, apiKey: 'bench' });
    const theirs = new OpenAI({ baseURL: url, apiKey: 'bench', maxRetries: 0, timeout: 10 * 60_000 });
    const clients: { name: string; call: Call }[] = [
      {
        name: 'ours (chat-stream.ts, node:http)',
        call: async () => {
          let n = 0;
          for await (const _ of (await ours.stream(body)).chunks) n++;
          return n;
        },
      },
      {
        name: 'the openai client (fetch)',
        call: async () => {
          let n = 0;
          for await (const _ of await theirs.chat.completions.create(body)) n++;
          return n;
        },
      },
    ];
    let chunkCount: number | undefined;
    const cpu: number[][] = clients.map(() => []);
    const wall: number[][] = clients.map(() => []);
    const loadBefore = load();
    for (let round = 0; round <= opts.rounds; round++) {
      for (const [i, c] of clients.entries()) {
        let started = 0;
        const c0 = process.cpuUsage();
        const t0 = Date.now();
        await Promise.all(
          Array.from({ length: opts.concurrency }, async () => {
            while (started++ < opts.calls) {
              const n = await c.call();
              // Both clients must read the whole reply, chunk for chunk.
              if (n !== (chunkCount ??= n) || n < 3) throw new Error(`${c.name}: ${n} chunks, expected ${chunkCount} (at least 3)`);
            }
          }),
        );
        const used = process.cpuUsage(c0);
        if (round === 0) continue; // warm-up
        cpu[i]!.push((used.user + used.system) / 1000 / opts.calls);
        wall[i]!.push((Date.now() - t0) / opts.calls);
      }
    }
    const ms = (x: number) => `${x.toFixed(3)} ms`;
    console.log(
      `\n## 11. Model client per streamed call (${opts.rounds} rounds × ${opts.calls} calls, ${opts.concurrency} at a time, ${JSON.stringify(body).length} bytes each)`,
    );
    console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after; the scripted model in its own process`);
    console.log(
      table([
        ['client', 'CPU per call (median of rounds)', 'rounds', 'wall per call'],
        ...clients.map((c, i) => [c.name, ms(median(cpu[i]!)), cpu[i]!.map((x) => x.toFixed(3)).join(', '), ms(median(wall[i]!))]),
      ]),
    );
    console.log(`ours/openai CPU per call: ${(median(cpu[0]!) / median(cpu[1]!)).toFixed(2)}×`);
  } finally {
    provider.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '20' },
      rounds: { type: 'string', default: '4' },
    },
  });
  modelClient({ calls: Number(values.calls), concurrency: Number(values.concurrency), rounds: Number(values.rounds) }).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
