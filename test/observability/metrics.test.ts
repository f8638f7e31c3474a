/**
 * `durable-agent worker --metrics-port` serves the Core SDK's metrics for Prometheus
 * (ARCHITECTURE.md#observability); bad metrics or tracing settings are refused by name.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../src/server/dev-server';
import { testAddress } from '../helpers/server';
import { waitFor } from '../helpers/wait';

const CLI = path.resolve(__dirname, '../../bin/durable-agent.js');
const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  TEMPORAL_ADDRESS: testAddress(),
  DURABLE_AGENT_TASK_QUEUE: `metrics-${process.pid}`,
  OTEL_TRACES_EXPORTER: undefined,
  OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
  ...extra,
});

test('the worker serves Temporal metrics in the Prometheus format on --metrics-port', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'worker', '--metrics-port', String(port)], { env: env(), stdio: 'ignore' });
  try {
    const body = await waitFor(
      'the metrics endpoint',
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        const text = await res.text();
        return /^temporal_\w+/m.test(text) ? text : undefined;
      },
      { timeoutMs: 120_000, everyMs: 250, ignoreErrors: true },
    );
    expect(body).toMatch(/^# TYPE temporal_\w+ (counter|gauge|histogram)/m);
    expect(body).toContain('temporal_request');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});

test.each([
  [['--metrics-port', 'abc'], {}, "--metrics-port: expected [HOST:]PORT with a port 1-65535, got 'abc'"],
  [['--metrics-port', '70000'], {}, '--metrics-port'],
  [[], { OTEL_TRACES_EXPORTER: 'zipkin' }, "OTEL_TRACES_EXPORTER: unsupported exporter 'zipkin'"],
  [['--deployment', 'agents'], {}, '--build-id: required with --deployment'],
  [['--deployment', 'a b', '--build-id', 'b1'], {}, "--deployment: 'a b' must be 1-64 letters"],
  [[], { DURABLE_AGENT_DEPLOYMENT: 'agents' }, 'DURABLE_AGENT_BUILD_ID is not set'],
])('worker %j %j exits 2 naming the setting', (args, extra, message) => {
  const r = spawnSync(process.execPath, [CLI, 'worker', ...args], { env: env(extra), encoding: 'utf8', timeout: 120_000 });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(message);
});
