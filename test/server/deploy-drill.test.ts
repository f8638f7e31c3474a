/**
 * The deploy drill (ARCHITECTURE.md#deploys) on the full Temporal server (1.30, PostgreSQL), with
 * the drainage intervals shortened. Sessions start on build A (the current code) and are pinned to
 * it; build B's workflow code differs in a way that cannot replay A's runs (a timer before every
 * model call: test/fixtures/build-b/model-calls.ts). B is made current: A's sessions finish their
 * run on A, move to B at continue-as-new and finish there; new sessions start on B; no workflow
 * task fails anywhere; A is then drained and its worker stops without anything left on it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import {
  BuildNotFoundError,
  deploymentStatus,
  DeploymentNotFoundError,
  setCurrentBuild,
  type DeploymentStatus,
} from '../../src/client/deploy';
import type { SessionHandle } from '../../src/client/client';
import { submitBatch } from '../../src/client/batch';
import { readJobsFile } from '../../src/client/jobs-file';
import { listRuns } from '../../src/client/visibility';
import { startPostgresServer, type PostgresServer } from '../../src/server/cluster';
import { ensureTemporalServer, type TemporalServerInstall } from '../../src/server/ensure-temporal-server';
import { parsePostgresUrl, setupSchemas } from '../../src/server/postgres';
import type { ResultMessage } from '../../src/shared/events';
import { turn } from '../../src/testing/scripted-model';
import { quietSdkLogs, startStack, type Stack } from '../../src/testing/stack';
import { compileWorkflowsForNode, SESSION_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../../src/worker/bundle';
import { scenarioTag, workflowBundle } from '../helpers/harness';
import { dropDatabases, uniqueDatabaseUrl } from '../helpers/postgres';
import { REPO_ROOT, spawnWorker } from '../helpers/chaos';
import { waitFor } from '../helpers/wait';

const execFileAsync = promisify(execFile);
const DEPLOYMENT = 'drill';
const { VersioningBehavior } = temporal.api.enums.v1;
const BUILD_B_MODEL_CALLS = path.join(__dirname, '..', 'fixtures', 'build-b', 'model-calls.ts');
const cleanups: (() => Promise<unknown>)[] = [];
let install: TemporalServerInstall;

beforeAll(async () => {
  quietSdkLogs('WARN');
  install = await ensureTemporalServer({ quiet: true });
}, 900_000);

afterAll(async () => {
  for (const step of cleanups.splice(0).reverse()) await step().catch((e: unknown) => console.error(e));
}, 120_000);

/** Build B: the session workflows with model-calls.ts swapped for the fixture. */
async function bundleB(): Promise<{ code: string }> {
  // webpack is the SDK bundler's own (a dependency of @temporalio/worker).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const webpack = require(require.resolve('webpack', { paths: [require.resolve('@temporalio/worker')] })) as {
    NormalModuleReplacementPlugin: new (re: RegExp, to: string) => object;
  };
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...SESSION_BUNDLER_OPTIONS,
    logger: {
      info: () => undefined,
      warn: () => undefined,
      error: console.error,
      debug: () => undefined,
      trace: () => undefined,
      log: () => undefined,
    },
    webpackConfigHook: (config) => {
      const out = compileWorkflowsForNode(config);
      out.plugins = [...(out.plugins ?? []), new webpack.NormalModuleReplacementPlugin(/^\.\/model-calls$/, BUILD_B_MODEL_CALLS) as never];
      return out;
    },
  });
}

/** Each run of a session, oldest first: the builds its workflow tasks completed on, its timers, its failed tasks. */
async function runsOf(stack: Stack, sessionId: string): Promise<{ builds: string[]; timers: number; failedTasks: number }[]> {
  const client = stack.client.client;
  const runs: { runId: string; start: number }[] = [];
  for await (const r of listRuns(client, `WorkflowId = '${sessionId}'`)) runs.push({ runId: r.runId, start: r.startTime.getTime() });
  runs.sort((a, b) => a.start - b.start);
  const out = [];
  for (const { runId } of runs) {
    const history = await client.workflow.getHandle(sessionId, runId).fetchHistory();
    const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    const builds = new Set<string>();
    let timers = 0;
    let failedTasks = 0;
    for (const e of events) {
      const done = e.workflowTaskCompletedEventAttributes;
      if (done) builds.add(done.deploymentVersion?.buildId ?? done.workerDeploymentVersion?.split(/[.:]/)[1] ?? '(unversioned)');
      if (e.timerStartedEventAttributes) timers++;
      if (e.workflowTaskFailedEventAttributes) failedTasks++;
    }
    out.push({ builds: [...builds], timers, failedTasks });
  }
  return out;
}

/** Running sessions per build, as `durable-agent deploy status` reports them. */
async function census(stack: Stack): Promise<Record<string, number>> {
  const s = await deploymentStatus(stack.client.client, DEPLOYMENT);
  return Object.fromEntries(s.versions.map((v) => [v.buildId, v.runningSessions]));
}

test('deploy drill: sessions pinned to build A move to build B at continue-as-new; new ones start on B; A drains', async () => {
  const url = uniqueDatabaseUrl('deploy');
  cleanups.push(() => dropDatabases(url));
  const target = parsePostgresUrl(url);
  await setupSchemas(target, install, () => undefined);
  const server: PostgresServer = await startPostgresServer({
    target,
    install,
    stateDir: mkdtempSync(path.join(tmpdir(), 'da-deploy-')),
    // Drainage is seen in seconds, not minutes (the defaults are 3 min each).
    dynamicConfig: {
      'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '1s',
      'matching.wv.VersionDrainageStatusRefreshInterval': '1s',
    },
  });
  cleanups.push(() => server.stop());
  const stack = await startStack({
    address: server.address,
    taskQueue: `deploy-${process.pid}`,
    model: { scripted: {} },
    worker: { workflowBundle: await workflowBundle(), deployment: { name: DEPLOYMENT, buildId: 'A' } },
  });
  cleanups.push(() => stack.close());
  const client = stack.client.client;

  // A build becomes current once its workers have polled; before that it is refused by name.
  await expect(setCurrentBuild(client, DEPLOYMENT, 'B'))
    .rejects.toBeInstanceOf(DeploymentNotFoundError)
    .catch(async () => {
      await expect(setCurrentBuild(client, DEPLOYMENT, 'B')).rejects.toBeInstanceOf(BuildNotFoundError);
    });
  await waitFor(
    'build A to be known',
    async () => (await deploymentStatus(client, DEPLOYMENT).catch(() => undefined))?.versions.length === 1,
  );
  expect(await setCurrentBuild(client, DEPLOYMENT, 'A')).toEqual({ propagated: true });

  const work = mkdtempSync(path.join(tmpdir(), 'da-deploy-ws-'));
  const gate = path.join(work, 'gate');
  const start = async (name: string, gated: boolean): Promise<SessionHandle> => {
    stack.model!.addScenario({
      name,
      turns: [
        ...(gated ? [turn.tool('Bash', { command: `while [ ! -f '${gate}' ]; do sleep 0.05; done; echo released` })] : []),
        turn.tool('Glob', { pattern: '*' }),
        turn.tool('Glob', { pattern: '*' }),
        turn.tool('Glob', { pattern: '*' }),
        turn.text(`${name} done`),
      ],
    });
    const cwd = mkdtempSync(path.join(work, `${name}-`));
    return stack.client.start({
      prompt: `${scenarioTag(name)} work`,
      cwd,
      model: 'gpt-4.1-mini',
      permissionMode: 'bypassPermissions',
      sandbox: 'off',
      // Every two model calls: the points where a pinned session may move to the current build.
      continueAsNewEveryTurns: 2,
    });
  };
  const onA = await Promise.all([0, 1, 2, 3].map((i) => start(`deploy-a${i}`, true)));
  // Each is running on A (its first model call answered, its Bash call holding the turn).
  await waitFor('sessions on A to be in their first tool call', async () =>
    onA.every((_, i) => stack.model!.requests.some((r) => r.scenario === `deploy-a${i}`)),
  );
  await waitFor('the census to see them', async () => (await census(stack)).A === onA.length);
  const before = await census(stack);
  const cli = (...args: string[]) =>
    execFileAsync(process.execPath, [path.join(REPO_ROOT, 'bin', 'durable-agent.js'), ...args], {
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, DURABLE_AGENT_TASK_QUEUE: stack.taskQueue },
    });
  // `ls` shows the build of each running session.
  const listed = (await cli('ls', '--status', 'running')).stdout.split('\n').filter(Boolean);
  expect(listed[0]).toMatch(/ BUILD$/);
  expect(listed.slice(1).map((l) => l.split(/\s+/).at(-1))).toEqual(['A', 'A', 'A', 'A']);

  // Build B: a worker process of its own (as a deploy starts one), named by the environment; then
  // it is made current with the command line.
  const bundlePath = path.join(work, 'bundle-b.js');
  writeFileSync(bundlePath, (await bundleB()).code);
  const workerB = spawnWorker({
    address: server.address,
    modelUrl: stack.modelUrl!,
    bundlePath,
    name: 'build-b',
    env: { DURABLE_AGENT_TASK_QUEUE: stack.taskQueue, DURABLE_AGENT_DEPLOYMENT: DEPLOYMENT, DURABLE_AGENT_BUILD_ID: 'B' },
  });
  cleanups.push(() => workerB.stop());
  await workerB.ready;
  expect(workerB.output()).toContain(`deployment ${DEPLOYMENT} build B`);
  await waitFor('build B to be known', async () => (await deploymentStatus(client, DEPLOYMENT)).versions.length === 2);
  expect((await cli('deploy', 'set-current', 'B', '--deployment', DEPLOYMENT)).stdout).toBe(
    `${DEPLOYMENT}: current build is now B (was A)\n`,
  );
  const onB = await Promise.all([0, 1].map((i) => start(`deploy-b${i}`, false)));
  writeFileSync(gate, '');

  const results = (await Promise.all([...onA, ...onB].map((h) => h.result()))) as ResultMessage[];
  for (const [i, r] of results.entries()) expect({ i, subtype: r.subtype, result: r.result }).toMatchObject({ i, subtype: 'success' });

  // A's sessions: the first run on A (no timers: A's code), the last on B (B's timers); nothing failed.
  for (const h of onA) {
    const runs = await runsOf(stack, h.sessionId);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[0]).toEqual({ builds: ['A'], timers: 0, failedTasks: 0 });
    expect(runs.at(-1)).toMatchObject({ builds: ['B'], failedTasks: 0 });
    expect(runs.at(-1)!.timers).toBeGreaterThan(0);
    for (const run of runs) {
      expect(run.failedTasks).toBe(0);
      expect(run.builds).toHaveLength(1);
    }
  }
  // New sessions: B from their first task.
  for (const h of onB) {
    for (const run of await runsOf(stack, h.sessionId)) expect(run).toMatchObject({ builds: ['B'], failedTasks: 0 });
  }

  // A holds nothing now: the server sees it drained, its worker stops, and sessions go on without it.
  await waitFor(
    'build A to be drained',
    async () => (await deploymentStatus(client, DEPLOYMENT)).versions.find((v) => v.buildId === 'A')?.status === 'drained',
  );
  const after = await census(stack);
  await stack.stopWorker();
  const last = await start('deploy-after', false);
  expect(await last.result()).toMatchObject({ subtype: 'success' });
  expect((await runsOf(stack, last.sessionId)).every((r) => r.builds.join() === 'B')).toBe(true);
  const status = JSON.parse((await cli('deploy', 'status', '--deployment', DEPLOYMENT, '--json')).stdout) as DeploymentStatus;
  expect(status).toMatchObject({ deployment: DEPLOYMENT, currentBuild: 'B' });
  expect(status.versions.map((v) => [v.buildId, v.runningSessions]).sort()).toEqual([
    ['A', 0],
    ['B', 0],
  ]);

  // What each workflow is: a session pinned to its build; the batch coordinator (long-lived) following the current one.
  stack.model!.addScenario({ name: 'deploy-batch-job', turns: [turn.text('job done')] });
  const jobs = path.join(work, 'jobs.jsonl');
  writeFileSync(
    jobs,
    JSON.stringify({ id: 'j1', prompt: `${scenarioTag('deploy-batch-job')} go`, cwd: work, permissionMode: 'bypassPermissions' }),
  );
  const batchId = `deploy-batch-${process.pid}`;
  await submitBatch(stack.client, readJobsFile(jobs, { batchId }), { batchId, concurrency: 1 });
  const batch = client.workflow.getHandle(batchId);
  await waitFor('the batch to complete', async () => (await batch.describe()).status.name === 'COMPLETED', { timeoutMs: 60_000 });
  const versioning = async (id: string) => (await client.workflow.getHandle(id).describe()).raw.workflowExecutionInfo?.versioningInfo;
  expect(await versioning(batchId)).toMatchObject({ behavior: VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE });
  expect(await versioning(last.sessionId)).toMatchObject({
    behavior: VersioningBehavior.VERSIONING_BEHAVIOR_PINNED,
    deploymentVersion: { deploymentName: DEPLOYMENT, buildId: 'B' },
  });
  expect(JSON.parse((await cli('info', last.sessionId, '--json')).stdout)).toMatchObject({ buildId: 'B' });
  const closed = (await cli('ls', '--limit', '2')).stdout.split('\n').filter(Boolean);
  expect(closed[0]).toMatch(/ BUILD$/);
  expect(closed.slice(1).map((l) => l.split(/\s+/).at(-1))).toEqual(['B', 'B']);

  // Bad input is named and changes nothing (exit 2).
  const bad = (...args: string[]) =>
    cli(...args).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
  expect(await bad('deploy', 'status', '--deployment', 'nope')).toEqual({
    code: 2,
    stderr: "no worker deployment 'nope': start a worker with --deployment nope --build-id ID first\n",
  });
  expect(await bad('deploy', 'set-current', 'C', '--deployment', DEPLOYMENT)).toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/^build 'C' of deployment 'drill' has not polled yet \(known builds: .*A.*\)/),
  });
  expect(await bad('deploy', 'status')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^--deployment: required/) });
  expect(await bad('deploy', 'promote')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^deploy: unknown subcommand 'promote'/) });
  expect((await deploymentStatus(client, DEPLOYMENT)).currentBuild).toBe('B');

  // The drill's figures (docs/TESTING.md#deploy-drill).
  console.log(
    `deploy drill: before B: ${JSON.stringify(before)} running; sessions ${onA.length} on A + ${onB.length} new; ` +
      `after: ${JSON.stringify(after)} running, A ${status.versions.find((v) => v.buildId === 'A')?.status}; ` +
      `A's sessions' runs by build: ${JSON.stringify(await Promise.all(onA.map(async (h) => (await runsOf(stack, h.sessionId)).map((r) => r.builds.join()))))}`,
  );
}, 300_000);
