/**
 * Benchmark: the payload codec (src/codec/). Two parts:
 *
 * 1. Throughput and ratio, in process: encode/decode MB/s of encryption alone and of each
 *    compression algorithm + encryption, on payloads cut from a realistic transcript — this
 *    repository's source as the Read tool shows it, and service logs as Bash would print them —
 *    at the sizes our payloads take: one tool result (~4-16 KiB) and a prompt page / carried
 *    state (~1.5 MiB).
 * 2. History bytes, on a dev server: the same scripted session (Read and Bash on those files)
 *    with no codec, encryption, and encryption + compression; bytes the server stores per run.
 *
 *   npx tsx bench/codec.ts [--turns 40] [--seconds 1]
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { decode, encode } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { DurableAgentClient } from '../src/client/client';
import { createPayloadCodecs, type EncryptionKeys } from '../src/codec';
import type { Message } from '../src/shared/messages';
import { turn, type TurnInput } from '../src/testing/scripted-model';
import { createWorker } from '../src/worker/worker';
import { machine, startBenchStack, table } from './lib';

const ROOT = path.resolve(__dirname, '..');
const KEYS: EncryptionKeys = { current: { id: 'bench', key: randomBytes(32) } };

/** Source files of this repository (what an agent reads), in a stable order. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(p);
    }
  };
  walk(path.join(ROOT, 'src'));
  return out;
}

/** Service logs with the entropy real ones have: timestamps, request ids, durations, paths, a stack now and then. */
function serviceLog(lines: number, seed: number): string {
  let x = seed >>> 0;
  const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const routes = ['/api/v1/sessions', '/api/v1/sessions/:id/events', '/healthz', '/api/v1/batches', '/api/v1/users/:id'];
  const out: string[] = [];
  let t = Date.UTC(2025, 2, 1, 9, 0, 0) + seed * 1000;
  for (let i = 0; i < lines; i++) {
    t += Math.floor(rnd() * 900);
    const ts = new Date(t).toISOString();
    const id = Math.floor(rnd() * 2 ** 48)
      .toString(16)
      .padStart(12, '0');
    const r = rnd();
    if (r < 0.02) {
      out.push(
        `${ts} ERROR [http] request ${id} failed: ECONNRESET upstream=10.0.${Math.floor(rnd() * 255)}.${Math.floor(rnd() * 255)}:8443`,
      );
      out.push(
        `    at TLSSocket.onConnectEnd (node:_tls_wrap:1727:19)`,
        `    at TLSSocket.emit (node:events:531:35)`,
        `    at endReadableNT (node:internal/streams/readable:1696:12)`,
      );
    } else if (r < 0.1) {
      out.push(
        `${ts} WARN  [pool] slow query ${Math.floor(rnd() * 4000)}ms: SELECT * FROM sessions WHERE owner_id = $1 AND status = $2 ORDER BY updated_at DESC LIMIT 50`,
      );
    } else {
      const route = routes[Math.floor(rnd() * routes.length)]!.replace(':id', Math.floor(rnd() * 1e6).toString());
      out.push(
        `${ts} INFO  [http] ${rnd() < 0.7 ? 'GET ' : 'POST'} ${route} ${rnd() < 0.97 ? 200 : 404} ${Math.floor(rnd() * 250)}ms req=${id} ua="durable-agent/0.1 node/20.19"`,
      );
    }
  }
  return out.join('\n');
}

/** The Read tool's view of a file: numbered lines. */
const numbered = (text: string) =>
  text
    .split('\n')
    .map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
    .join('\n');

/** A transcript as the workflow holds it: alternating Read (source) and Bash (logs) tool turns. */
function transcript(targetBytes: number): Message[] {
  const files = sourceFiles();
  const messages: Message[] = [{ role: 'user', content: 'Find out why session events arrive late; read the server code and the logs.' }];
  for (let i = 0; JSON.stringify(messages).length < targetBytes; i++) {
    const read = i % 2 === 0;
    const id = `call_${i}`;
    const file = files[((i / 2) % files.length) | 0]!;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: read ? `Let me look at ${path.relative(ROOT, file)}.` : 'Checking the service log around that time.' },
        {
          type: 'tool_use',
          id,
          name: read ? 'Read' : 'Bash',
          input: read ? { file_path: file } : { command: `tail -n 150 logs/api-${i}.log` },
        },
      ],
    });
    const content = read ? numbered(readFileSync(file, 'utf8')).slice(0, 16_000) : serviceLog(150, i);
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });
  }
  return messages;
}

interface Case {
  name: string;
  codecs: PayloadCodec[];
}

const CASES: Case[] = [
  { name: 'AES-256-GCM', codecs: createPayloadCodecs({ keys: KEYS })! },
  { name: 'deflate-raw + AES', codecs: createPayloadCodecs({ keys: KEYS, compress: { algorithm: 'deflate-raw' } })! },
  { name: 'brotli q5 + AES (default)', codecs: createPayloadCodecs({ keys: KEYS, compress: { algorithm: 'brotli' } })! },
];

/** MB/s (10^6 bytes of original payload data per second) over at least `seconds`. */
async function rate(bytes: number, seconds: number, fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < seconds * 1e9) {
    await fn();
    n++;
    elapsed = Number(process.hrtime.bigint() - start);
  }
  return (bytes * n) / 1e6 / (elapsed / 1e9);
}

async function throughput(seconds: number): Promise<void> {
  const messages = transcript(1.5 * 2 ** 20);
  const results = messages.filter((m) => Array.isArray(m.content) && m.content[0]?.type === 'tool_result');
  const sets: { name: string; payloads: Payload[] }[] = [
    {
      name: `tool results (${results.length}, mean ${(JSON.stringify(results).length / results.length / 1024).toFixed(1)} KiB)`,
      payloads: results.map((m) => defaultPayloadConverter.toPayload(m)),
    },
    {
      name: `one transcript page (${(JSON.stringify(messages).length / 2 ** 20).toFixed(2)} MiB)`,
      payloads: [defaultPayloadConverter.toPayload(messages)],
    },
  ];
  const rows: (string | number)[][] = [['payloads', 'codec', 'ratio', 'encode MB/s', 'decode MB/s']];
  for (const set of sets) {
    const bytes = set.payloads.reduce((s, p) => s + p.data!.length, 0);
    for (const c of CASES) {
      const stored = await encode(c.codecs, set.payloads);
      const storedBytes = stored.reduce((s, p) => s + temporal.api.common.v1.Payload.encode(p).finish().length, 0);
      const plainBytes = set.payloads.reduce((s, p) => s + temporal.api.common.v1.Payload.encode(p).finish().length, 0);
      const enc = await rate(bytes, seconds, () => encode(c.codecs, set.payloads));
      const dec = await rate(bytes, seconds, () => decode(c.codecs, stored));
      rows.push([set.name, c.name, (plainBytes / storedBytes).toFixed(2), enc.toFixed(0), dec.toFixed(0)]);
    }
  }
  console.log(table(rows));
  console.log('ratio = payload bytes as stored without a codec ÷ with it (> 1: smaller)\n');
}

/** Bytes of a workflow's stored history (all pages), as a codec-less client receives them. */
async function historyBytes(client: DurableAgentClient, workflowId: string): Promise<number> {
  let bytes = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.client.workflowService.getWorkflowExecutionHistory({
      namespace: client.namespace,
      execution: { workflowId },
      nextPageToken,
    });
    bytes += temporal.api.history.v1.History.encode(page.history ?? {}).finish().length;
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return bytes;
}

async function historyEffect(turns: number): Promise<void> {
  // One worker per codec below, each on a queue of its own: the stack runs none itself.
  const { stack, model } = await startBenchStack();
  const { connection, clientConnection } = stack;
  const ws = mkdtempSync(path.join(tmpdir(), 'da-bench-codec-'));
  const files = sourceFiles();
  mkdirSync(path.join(ws, 'logs'));
  for (let i = 0; i < turns; i++) writeFileSync(path.join(ws, 'logs', `api-${i}.log`), serviceLog(400, i));
  for (const f of files) {
    mkdirSync(path.dirname(path.join(ws, path.relative(ROOT, f))), { recursive: true });
    copyFileSync(f, path.join(ws, path.relative(ROOT, f)));
  }
  const script: TurnInput[] = Array.from({ length: turns - 1 }, (_, i) =>
    i % 2 === 0
      ? turn.tool('Read', { file_path: path.join(ws, path.relative(ROOT, files[((i / 2) % files.length) | 0]!)) })
      : turn.tool('Bash', { command: `tail -n 150 logs/api-${i}.log` }),
  );
  const configs: { name: string; codecs: PayloadCodec[] }[] = [
    { name: 'no codec', codecs: [] },
    { name: 'AES-256-GCM', codecs: createPayloadCodecs({ keys: KEYS })! },
    { name: 'deflate-raw + AES', codecs: createPayloadCodecs({ keys: KEYS, compress: { algorithm: 'deflate-raw' } })! },
    { name: 'brotli q5 + AES', codecs: createPayloadCodecs({ keys: KEYS, compress: true })! },
  ];
  const raw = await DurableAgentClient.connect({ connection: clientConnection, payloadCodecs: [] });
  const rows: (string | number)[][] = [['codec', 'history', 'vs no codec', 'transcript (JSON)', 'wall']];
  let baseline = 0;
  try {
    for (const [i, c] of configs.entries()) {
      const taskQueue = `codec-${i}`;
      const worker = await createWorker({
        connection,
        taskQueue,
        payloadCodecs: c.codecs,
        model: { baseURL: model.url, apiKey: 'bench' },
        log: () => undefined,
      });
      const running = worker.run();
      const agents = await DurableAgentClient.connect({ connection: clientConnection, taskQueue, payloadCodecs: c.codecs });
      model.addScenario({ name: `codec-${i}`, turns: [...script, turn.text('done')] });
      const started = Date.now();
      const session = await agents.start({
        prompt: `[scenario:codec-${i}] Find out why session events arrive late.`,
        cwd: ws,
        permissionMode: 'bypassPermissions',
        compaction: { enabled: false, toolResultBudgetChars: 0 },
        loopDetection: { enabled: false },
      });
      const result = await session.result();
      const wall = Date.now() - started;
      if (result.subtype !== 'success') throw new Error(`${c.name}: session ended ${result.subtype}`);
      const transcriptBytes = JSON.stringify(await session.transcript()).length;
      const bytes = await historyBytes(raw, session.sessionId);
      baseline ||= bytes;
      rows.push([
        c.name,
        `${(bytes / 1024).toFixed(0)} KiB`,
        `${((bytes / baseline) * 100).toFixed(1)} %`,
        `${(transcriptBytes / 1024).toFixed(0)} KiB`,
        `${(wall / 1000).toFixed(1)} s`,
      ]);
      worker.shutdown();
      await running;
    }
  } finally {
    await stack.close();
  }
  console.log(table(rows));
  console.log(
    `one session of ${turns} turns (Read of this repo's source and Bash tail of service logs), one run each; history = bytes the server stores\n`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { turns: { type: 'string', default: '40' }, seconds: { type: 'string', default: '1' } } });
  console.log(`payload codec — ${new Date().toISOString().slice(0, 10)}, ${machine()}\n`);
  await throughput(Number(values.seconds));
  await historyEffect(Number(values.turns));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
