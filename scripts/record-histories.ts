/**
 * Record the replay corpus: run every scenario of test/replay/scenarios.ts on a fresh in-memory
 * dev server, with the scripted model and an in-process worker running the current workflow
 * code, and save each session's history as test/replay/histories/<name>.json (the JSON that
 * `temporal workflow show --output json` prints).
 *
 *   npx tsx scripts/record-histories.ts            # re-record everything
 *   npx tsx scripts/record-histories.ts interrupt-model tool-calls
 *
 * Re-record only on purpose: a history recorded by today's code is what yesterday's running
 * sessions look like to tomorrow's code (docs/REPLAY.md).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { DurableAgentClient } from '../src/client/client';
import { startScriptedModel } from '../src/testing/scripted-model';
import { startDevServer } from '../src/server/dev-server';
import { createWorker } from '../src/worker/worker';
import { historyToJSON } from '../test/replay/history-json';
import { REPLAY_SCENARIOS, type ReplayScenario } from '../test/replay/scenarios';
import { connectTemporal } from '../src/server/connection';

export const HISTORIES_DIR = path.join(__dirname, '..', 'test', 'replay', 'histories');

async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((n) => !REPLAY_SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) {
    console.error(`unknown scenario(s): ${unknown.join(', ')}\nknown: ${REPLAY_SCENARIOS.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const chosen = argv.length > 0 ? REPLAY_SCENARIOS.filter((s) => argv.includes(s.name)) : REPLAY_SCENARIOS;
  const root = mkdtempSync(path.join(tmpdir(), 'da-record-'));
  const server = await startDevServer({
    dbFile: ':memory:',
    ui: false,
    dynamicConfig: { 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 },
  });
  const model = await startScriptedModel({ scenarios: [] });
  const connection = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({ connection, model: { baseURL: model.url, apiKey: 'record-key' }, log: () => undefined });
  const running = worker.run();
  const client = await DurableAgentClient.connect({ connection: await connectTemporal({ address: server.address }) });
  mkdirSync(HISTORIES_DIR, { recursive: true });
  let failed = 0;
  try {
    for (const s of chosen) {
      try {
        const files = await record(s, { client, model, root });
        console.log(`recorded ${s.name}: ${files.join(', ')}`);
      } catch (e) {
        failed++;
        console.error(`FAILED ${s.name}: ${(e as Error).message}`);
      }
    }
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await client.client.connection.close();
    await model.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
  return failed > 0 ? 1 : 0;
}

async function record(
  s: ReplayScenario,
  { client, model, root }: { client: DurableAgentClient; model: Awaited<ReturnType<typeof startScriptedModel>>; root: string },
): Promise<string[]> {
  const ws = path.join(root, s.name);
  mkdirSync(ws);
  for (const [file, content] of Object.entries(s.files ?? {})) writeFileSync(path.join(ws, file), content);
  model.addScenario(s.scenarios(ws));
  const handle = await client.start({
    sessionId: `replay-${s.name}`,
    prompt: `[scenario:${s.name}] Do the task.`,
    cwd: ws,
    permissionMode: 'bypassPermissions',
    // Fixed, so a re-recording differs only where the workflow's behaviour does.
    platform: 'linux',
    startedAt: '2026-01-01T00:00:00.000Z',
    ...s.options,
  });
  const requestFor = async (turnIndex: number) => {
    for (let i = 0; i < 1200; i++) {
      if (model.requests.some((r) => r.scenario === s.name && r.turnIndex === turnIndex)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no request for turn ${turnIndex} within 30 s`);
  };
  await s.drive?.({ handle, model, requestFor });
  const result = await handle.result();
  const got = { subtype: result.subtype, ...(s.expect.exit_reason ? { exit_reason: result.exit_reason } : {}) };
  if (JSON.stringify(got) !== JSON.stringify(s.expect)) {
    throw new Error(
      `ended ${JSON.stringify(got)}, expected ${JSON.stringify(s.expect)}: ${JSON.stringify(result.errors ?? result.result)}`,
    );
  }
  const scriptErrors = model.errors;
  if (scriptErrors.length > 0) throw new Error(`scripted model errors: ${scriptErrors.join('; ')}`);

  // Every run, first to last (a session that continued-as-new has several).
  const histories: string[] = [];
  let runId: string | undefined = handle.workflow.firstExecutionRunId;
  while (runId) {
    const history = await client.client.workflow.getHandle(handle.sessionId, runId).fetchHistory();
    histories.push(historyToJSON(history));
    const last = history.events?.at(-1);
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  const runs = s.runs ?? 1;
  if (histories.length !== runs) throw new Error(`recorded ${histories.length} runs, expected ${runs}`);
  const names = runs === 1 ? [`${s.name}.json`] : histories.map((_, k) => `${s.name}.run${k + 1}.json`);
  names.forEach((name, k) => writeFileSync(path.join(HISTORIES_DIR, name), `${histories[k]}\n`));
  return names;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
