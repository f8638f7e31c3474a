/**
 * The SDK program (test/types/sdk-app.ts), typed only with the Claude Agent SDK's types, run
 * against a real worker with only its import line changed: it connects as SDK code does (no
 * client passed; the environment names the server), and everything its README-shaped options ask
 * for happens — the hook denies, canUseTool decides, the MCP server answers, tokens stream, the
 * structured output arrives, the interrupt stops the turn.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { scenarioTag, useHarness } from '../helpers/harness';
import type { AppReport, runApp as RunApp } from './sdk-app';

const h = useHarness();

const SDK_IMPORT = "} from '@anthropic-ai/claude-agent-sdk';";
const GENERATED = path.join(__dirname, '.generated');

/** The program with its import line pointing at this package, and nothing else changed. */
function swappedProgram(): typeof RunApp {
  const source = readFileSync(path.join(__dirname, 'sdk-app.ts'), 'utf8');
  expect(source.split(SDK_IMPORT)).toHaveLength(2);
  mkdirSync(GENERATED, { recursive: true });
  const file = path.join(GENERATED, 'sdk-app.ts');
  writeFileSync(file, source.replace(SDK_IMPORT, "} from '../../../src/index';"));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(file) as { runApp: typeof RunApp }).runApp;
}

afterAll(() => rmSync(GENERATED, { recursive: true, force: true }));

test('a program written for the SDK runs unchanged against a real worker: hooks, canUseTool, MCP, partial messages, structured output, interrupt', async () => {
  const cwd = h.workspace();
  writeFileSync(path.join(cwd, 'notes.md'), 'two and three\n');
  const answer = JSON.stringify({ sum: 5, summary: 'two and three make five' });
  h.model.addScenario({
    name: 'sdk-app',
    turns: [
      turn.tool('Read', { file_path: path.join(cwd, 'notes.md') }),
      turn.tool('Bash', { command: 'rm -rf build' }),
      turn.tool('mcp__calc__divide', { a: 10, b: 2 }),
      turn.tool('Write', { file_path: path.join(cwd, 'out.txt'), content: 'x' }),
      turn.text(answer, { chunk_delay_ms: 5 }),
    ],
  });
  h.model.addScenario({ name: 'sdk-app-interrupt', turns: [turn.tool('Bash', { command: 'sleep 30' }), turn.text('never')] });

  // As SDK code connects: nothing passed, the environment says where (as for a spawned CLI).
  const saved = { address: process.env.TEMPORAL_ADDRESS, queue: process.env.DURABLE_AGENT_TASK_QUEUE };
  process.env.TEMPORAL_ADDRESS = h.env.TEMPORAL_ADDRESS;
  process.env.DURABLE_AGENT_TASK_QUEUE = h.env.DURABLE_AGENT_TASK_QUEUE;
  let report: AppReport;
  try {
    report = await swappedProgram()({
      cwd,
      mcpServer: path.join(__dirname, '..', 'fixtures', 'mcp', 'calc-stdio.mjs'),
      prompt: `${scenarioTag('sdk-app')} add the numbers in notes.md`,
      interruptPrompt: `${scenarioTag('sdk-app-interrupt')} wait`,
    });
  } finally {
    for (const [k, v] of [
      ['TEMPORAL_ADDRESS', saved.address],
      ['DURABLE_AGENT_TASK_QUEUE', saved.queue],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  h.model.assertConsumed('sdk-app');

  expect(report.sessionId).toMatch(/^session-/);
  expect(report.tools).toEqual(expect.arrayContaining(['Read', 'Bash', 'Write', 'mcp__calc__divide']));
  // The callback hook ran in this process and denied the command; the call never reached the permission check.
  expect(report.hookDenied).toEqual(['rm -rf build']);
  // canUseTool was asked for what no rule allows (Read is in allowedTools), and decided.
  expect(report.asked).toEqual(['mcp__calc__divide', 'Write']);
  const results = report.toolResults;
  expect(results).toHaveLength(4);
  expect(results[0]).toMatchObject({ content: expect.stringContaining('two and three'), isError: false });
  expect(results[1]).toMatchObject({ content: expect.stringContaining('no rm -rf in this repo'), isError: true });
  expect(results[2]).toEqual({ content: '5', isError: false });
  expect(results[3]).toMatchObject({ content: expect.stringContaining('this program only reads'), isError: true });
  // Partial messages: every reply's text streamed, the final one included.
  expect(report.streamEvents).toBeGreaterThan(0);
  expect(report.streamedText).toBe(report.repliesText);
  expect(report.streamedText).toContain(answer);
  expect(report.result).toEqual({ subtype: 'success', structured: { sum: 5, summary: 'two and three make five' } });
  // The interrupt stopped the turn at its first tool call; the second reply was never asked for.
  expect(report.interrupted).toEqual({ subtype: 'error_during_execution', turns: 1 });
  expect(h.requestsOf('sdk-app-interrupt')).toHaveLength(1);
});
