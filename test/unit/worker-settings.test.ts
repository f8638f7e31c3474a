/**
 * The worker's settings are read in one place (src/worker/settings.ts): every variable it reads is
 * listed, every listed variable is documented in README's Configuration section, and bad values
 * are refused naming each variable.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { WORKER_VARIABLES, WorkerSettingsError, workerSettingsFromEnv } from '../../src/worker/settings';
import { createWorker } from '../../src/worker/worker';

const README = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

/** README's `## Configuration` section, up to the next top-level heading. */
function configurationSection(): string {
  const start = README.indexOf('\n## Configuration\n');
  expect(start).toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

/** An environment that records which names are read. */
function recordingEnv(values: Record<string, string> = {}): { env: Record<string, string | undefined>; read: Set<string> } {
  const read = new Set<string>();
  const env = new Proxy(values as Record<string, string | undefined>, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  return { env, read };
}

test('the settings read exactly the variables WORKER_VARIABLES lists', () => {
  const { env, read } = recordingEnv();
  workerSettingsFromEnv(env);
  expect([...read].sort()).toEqual(Object.keys(WORKER_VARIABLES).sort());
});

test.each(Object.keys(WORKER_VARIABLES))('%s is documented in README.md#configuration', (name) => {
  expect(configurationSection()).toContain(name);
});

test('defaults with nothing set', () => {
  const s = workerSettingsFromEnv({});
  expect(s).toMatchObject({
    address: 'localhost:7233',
    namespace: 'default',
    taskQueue: 'agent',
    model: {},
    rateLimiting: true,
    rateLimitCaps: {},
    passEnv: [],
    scrubEnv: [],
    live: {},
    checkpointRemote: '',
    mcpToolTimeoutMs: 600_000,
  });
  expect(s.toolsTaskQueue).toBeUndefined();
  expect(s.payloadCodecs).toBeUndefined();
  expect(s.deployment).toBeUndefined();
  expect(s.tracesExporter).toBeUndefined();
  expect(s.workspacesRoot).toMatch(/durable-agent\/workspaces$/);
  expect(s.attemptsDir).toMatch(/durable-agent\/attempts$/);
});

test('each variable reaches its setting', () => {
  const s = workerSettingsFromEnv({
    TEMPORAL_ADDRESS: 'temporal:7233',
    TEMPORAL_NAMESPACE: 'ns',
    DURABLE_AGENT_TASK_QUEUE: 'q',
    DURABLE_AGENT_TOOLS_TASK_QUEUE: 'q-tools@h',
    OPENAI_BASE_URL: 'http://llm/v1',
    OPENAI_API_KEY: 'sk-x',
    OPENAI_ORG_ID: 'org',
    OPENAI_PROJECT_ID: 'proj',
    DURABLE_AGENT_PRICING_FILE: '/p.json',
    DURABLE_AGENT_MODEL_MAX_CONCURRENT: '4',
    DURABLE_AGENT_FLEET_MAX_CONCURRENT: '40',
    DURABLE_AGENT_MODEL_RATE_LIMIT: 'off',
    DURABLE_AGENT_COMPRESS: '1',
    DURABLE_AGENT_DEPLOYMENT: 'agents',
    DURABLE_AGENT_BUILD_ID: 'b1',
    DURABLE_AGENT_WORKFLOW_BUNDLE: '/b.js',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
    OTEL_SERVICE_NAME: 'svc',
    DURABLE_AGENT_SANDBOX: 'required',
    DURABLE_AGENT_BWRAP: '/usr/bin/bwrap',
    DURABLE_AGENT_PASS_ENV: 'A, B',
    DURABLE_AGENT_SCRUB_ENV: 'X_*',
    DURABLE_AGENT_LIVE_LISTEN: '0.0.0.0:7000',
    DURABLE_AGENT_WORKSPACES: '/srv/ws',
    XDG_STATE_HOME: '/state',
    DURABLE_AGENT_CHECKPOINT_REMOTE: '/srv/ckpt.git',
    MCP_TOOL_TIMEOUT: '5000',
  });
  expect(s).toMatchObject({
    address: 'temporal:7233',
    namespace: 'ns',
    taskQueue: 'q',
    toolsTaskQueue: 'q-tools@h',
    model: { baseURL: 'http://llm/v1', apiKey: 'sk-x', organization: 'org', project: 'proj' },
    pricingFile: '/p.json',
    rateLimiting: false,
    rateLimitCaps: { maxConcurrent: 4, fleetMaxConcurrent: 40 },
    deployment: { name: 'agents', buildId: 'b1' },
    workflowBundle: '/b.js',
    tracesExporter: 'otlp',
    otelServiceName: 'svc',
    sandbox: { bwrapPath: '/usr/bin/bwrap', defaults: { failIfUnavailable: true } },
    passEnv: ['A', 'B'],
    scrubEnv: ['X_*'],
    live: { host: '0.0.0.0', port: 7000 },
    workspacesRoot: '/srv/ws',
    attemptsDir: '/state/durable-agent/attempts',
    checkpointRemote: '/srv/ckpt.git',
    mcpToolTimeoutMs: 5000,
  });
  expect(s.payloadCodecs?.map((c) => c.constructor.name)).toEqual(['CompressionCodec']);
  expect(workerSettingsFromEnv({ DURABLE_AGENT_LIVE_LISTEN: 'off' }).live).toBeUndefined();
  expect(workerSettingsFromEnv({ MCP_TOOL_TIMEOUT: 'soon' }).mcpToolTimeoutMs).toBe(600_000);
});

test('one bad value is refused with its own message, naming the variable', () => {
  expect(() => workerSettingsFromEnv({ DURABLE_AGENT_MODEL_MAX_CONCURRENT: '0' })).toThrow(
    "DURABLE_AGENT_MODEL_MAX_CONCURRENT: expected a whole number ≥ 1, got '0'",
  );
  expect(() => workerSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow("OTEL_TRACES_EXPORTER: unsupported exporter 'zipkin'");
  expect(() => workerSettingsFromEnv({ DURABLE_AGENT_DEPLOYMENT: 'agents' })).toThrow(/^DURABLE_AGENT_BUILD_ID is not set/);
});

test('several bad values are refused together, one line naming each variable', () => {
  const bad = {
    DURABLE_AGENT_MODEL_RPM: 'lots',
    DURABLE_AGENT_COMPRESS: 'fast',
    DURABLE_AGENT_DEPLOYMENT: 'agents',
    OTEL_TRACES_EXPORTER: 'zipkin',
    DURABLE_AGENT_SANDBOX: '{network',
    DURABLE_AGENT_PASS_ENV: 'bad-name',
    DURABLE_AGENT_LIVE_LISTEN: 'everywhere',
  };
  let error: unknown;
  try {
    workerSettingsFromEnv(bad);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(WorkerSettingsError);
  const lines = (error as WorkerSettingsError).problems;
  expect(lines).toHaveLength(7);
  for (const [i, name] of [
    'DURABLE_AGENT_MODEL_RPM',
    'DURABLE_AGENT_COMPRESS',
    'DURABLE_AGENT_BUILD_ID',
    'OTEL_TRACES_EXPORTER',
    'DURABLE_AGENT_SANDBOX',
    'DURABLE_AGENT_PASS_ENV',
    'DURABLE_AGENT_LIVE_LISTEN',
  ].entries()) {
    expect(lines[i]).toMatch(new RegExp(`^${name}`));
  }
  expect((error as Error).message).toBe(lines.join('\n'));
});

test('createWorker reads its settings before connecting: a bad one of any role fails a tools-only worker at once', async () => {
  const saved = { ...process.env };
  try {
    // Read by the model role only, and (the caps) only once connected, before the settings were read in one place.
    process.env.DURABLE_AGENT_MODEL_TPM = 'many';
    process.env.DURABLE_AGENT_LIVE_LISTEN = 'everywhere';
    await expect(createWorker({ roles: ['tools'], address: '127.0.0.1:1', log: () => {} })).rejects.toThrow(
      /^DURABLE_AGENT_MODEL_TPM: .*\nDURABLE_AGENT_LIVE_LISTEN: /,
    );
  } finally {
    process.env = saved;
  }
});
