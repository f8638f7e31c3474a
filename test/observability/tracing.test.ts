/**
 * Tracing (ARCHITECTURE.md#observability): one turn of a session — a model call asking for Bash,
 * the command, a final reply — gives one trace from the client's start through the workflow to
 * each activity, with a `model.call` span per model call (model, tokens, cost) and a `tool.call`
 * span per tool call (tool name, exit code). Spans are caught by an in-memory exporter.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DurableAgentClient } from '../../src/client/client';
import { turn } from '../../src/testing/scripted-model';
import { startStack, type Stack } from '../../src/testing/stack';
import { clientTracing } from '../../src/worker/telemetry';
import { testAddress } from '../helpers/server';
import { waitFor } from '../helpers/wait';

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);
let stack: Stack;
let client: DurableAgentClient;
/** The session's workspace: under the home cache, not /tmp (the Bash sandbox gives commands a private /tmp). */
let workspace: string;

beforeAll(async () => {
  mkdirSync(path.join(homedir(), '.cache', 'durable-agent'), { recursive: true });
  workspace = mkdtempSync(path.join(homedir(), '.cache', 'durable-agent', 'otel-'));
  const taskQueue = `otel-${randomUUID()}`;
  // No prebuilt bundle: the worker bundles the workflows with Temporal's OpenTelemetry interceptors.
  stack = await startStack({ address: testAddress(), taskQueue, worker: { telemetry: { spanProcessor: processor } } });
  const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer('test-client');
  client = await DurableAgentClient.connect({ connection: stack.clientConnection, taskQueue, interceptors: clientTracing(tracer) });
}, 240_000);

afterAll(async () => {
  await stack?.close();
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

interface Node {
  name: string;
  attributes: ReadableSpan['attributes'];
  children: Node[];
}

function tree(spans: ReadableSpan[], traceId: string): Node[] {
  const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(inTrace.map((s) => s.spanContext().spanId));
  for (const s of inTrace) {
    const parent = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : undefined;
    byParent.set(parent, [...(byParent.get(parent) ?? []), s]);
  }
  const build = (parent: string | undefined): Node[] =>
    (byParent.get(parent) ?? [])
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
      .map((s) => ({ name: s.name, attributes: s.attributes, children: build(s.spanContext().spanId) }));
  return build(undefined);
}

const names = (nodes: Node[]): unknown => nodes.map((n) => (n.children.length ? { [n.name]: names(n.children) } : n.name));
const find = (nodes: Node[], name: string): Node[] => nodes.flatMap((n) => [...(n.name === name ? [n] : []), ...find(n.children, name)]);

test('one turn gives one trace: client → workflow → activities, with model.call and tool.call spans', async () => {
  stack.model!.addScenario({
    name: 'traced',
    turns: [turn.tool('Bash', { command: 'exit 3' }), turn.text('done')],
  });
  const handle = await client.start({
    prompt: '[scenario:traced] Run it.',
    cwd: workspace,
    permissionMode: 'bypassPermissions',
  });
  expect((await handle.result()).subtype).toBe('success');

  const root = await waitFor('the client span', () => exporter.getFinishedSpans().find((s) => s.name.startsWith('StartWorkflow')));
  const traceId = root.spanContext().traceId;
  // Workflow spans leave through a sink after each activation: wait for the workflow's own span.
  await waitFor('the workflow span', () => exporter.getFinishedSpans().some((s) => s.name === 'RunWorkflow:agentSession'));
  const t = tree(exporter.getFinishedSpans(), traceId);

  // One trace, rooted at the client's start.
  expect(t.map((n) => n.name)).toEqual(['StartWorkflow:agentSession']);
  expect(t[0]!.children.map((n) => n.name)).toEqual(['RunWorkflow:agentSession']);
  const turnSpans = t[0]!.children[0]!.children.filter((n) => /callModel|runTool/.test(n.name));
  expect(names(turnSpans)).toEqual([
    { 'StartActivity:callModel': [{ 'RunActivity:callModel': ['model.call'] }] },
    { 'StartActivity:runTool': [{ 'RunActivity:runTool': ['tool.call'] }] },
    { 'StartActivity:callModel': [{ 'RunActivity:callModel': ['model.call'] }] },
  ]);

  const model = stack.model!.requests.find((r) => r.scenario === 'traced')!.body.model;
  const [firstCall, secondCall] = find(t, 'model.call');
  for (const call of [firstCall!, secondCall!]) {
    expect(call.attributes).toMatchObject({ 'gen_ai.request.model': model, 'gen_ai.response.model': model });
    expect(call.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
    expect(call.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(call.attributes['agent.cost_usd']).toEqual(expect.any(Number));
  }
  expect(firstCall!.attributes['agent.stop_reason']).toBe('tool_use');
  expect(secondCall!.attributes['agent.stop_reason']).toBe('end_turn');
  expect(find(t, 'tool.call')[0]!.attributes).toMatchObject({ 'tool.name': 'Bash', 'tool.exit_code': 3, 'tool.is_error': true });
});
