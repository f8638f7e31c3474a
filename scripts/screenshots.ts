/**
 * `npm run screenshots`: the dashboard's three pages as PNGs in docs/ (shown in the README).
 * Everything is real but the model: a dev server of its own, a worker, the scripted model playing
 * the demo session, one session waiting for approval and a batch of 6 tasks on a repository on two models; then Debian's
 * chromium (through playwright-core) opens each page. Writes docs/dashboard-{sessions,session,batch}.png.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { loadScenarioFile, turn } from '../src/testing/scripted-model';
import { quietSdkLogs, startStack } from '../src/testing/stack';
import { startDashboard } from '../src/ui/server';
import { submitBatch } from '../src/client/batch';
import { readJobsFile } from '../src/client/jobs-file';

const ROOT = path.resolve(__dirname, '..');
const DOCS = path.join(ROOT, 'docs');

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A bare repository with `tasks` files that say `broken`. */
function makeRepository(dir: string, tasks: number): string {
  const work = path.join(dir, 'repo-work');
  mkdirSync(work);
  for (let i = 1; i <= tasks; i++) writeFileSync(path.join(work, `task${i}.txt`), 'broken\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=demo', '-c', 'user.email=demo@example.com', ...args], { cwd: work });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'tasks');
  const bare = path.join(dir, 'repo.git');
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  return bare;
}

async function main(): Promise<void> {
  quietSdkLogs('ERROR');
  const dir = mkdtempSync(path.join(tmpdir(), 'durable-agent-shots-'));
  // The worker below makes the batch's workspaces here (not under /tmp: the Bash sandbox's /tmp is private).
  const workspaces = mkdtempSync('/var/tmp/durable-agent-shots-');
  process.env.DURABLE_AGENT_WORKSPACES = workspaces;
  const workspace = path.join(dir, 'workspace');
  cpSync(path.join(ROOT, 'examples', 'workspace'), workspace, { recursive: true });
  const demo = await loadScenarioFile(path.join(ROOT, 'examples', 'scenarios', 'demo.json'), { vars: { WORKSPACE: workspace } });
  const stack = await startStack({
    devServer: { dbFile: path.join(dir, 'temporal.db'), ui: false },
    model: { scripted: { scenarios: demo } },
  });
  const dashboard = await startDashboard({ client: stack.client, port: 0, pollMs: 250 });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const model = stack.model!;
    const fixed = await stack.client.start({
      prompt: '[scenario:demo] greet.js crashes when run. Find the bug, fix it, run the program to check.',
      model: 'gpt-4.1-mini',
      cwd: workspace,
      permissionMode: 'acceptEdits',
      allowedTools: ['Bash'],
    });
    await fixed.result();
    model.addScenario({
      name: 'cleanup',
      turns: [
        {
          text: 'The build directory is stale; removing it before rebuilding.',
          tool_calls: [{ name: 'Bash', arguments: { command: 'rm -rf build/' } }],
        },
        turn.text('Removed build/.'),
      ],
    });
    await stack.client.start({
      prompt: '[scenario:cleanup] Clean the build.',
      model: 'gpt-4.1',
      cwd: workspace,
      permissionMode: 'default',
    });

    // Six tasks on two models (submit --model gpt-4.1-mini --model gpt-4.1), each in its own clone
    // of a repository whose check fails until a task's file is fixed: four tasks fix theirs, two
    // do not. The report has a row per model, with verdicts and changes.
    const repo = makeRepository(dir, 6);
    const batchId = 'nightly-fixes';
    const jobs = Array.from({ length: 6 }, (_, i) => {
      const name = `fix-${i + 1}`;
      const fixes = i < 4;
      model.addScenario({
        name,
        turns: fixes
          ? [turn.tool('Bash', { command: `echo fixed > task${i + 1}.txt` }), turn.text(`Task ${i + 1}: fixed task${i + 1}.txt.`)]
          : [turn.text(`Task ${i + 1}: could not find the cause.`)],
      });
      return {
        id: `task-${i + 1}`,
        prompt: `[scenario:${name}] Make check ${i + 1} pass.`,
        permissionMode: 'bypassPermissions',
        workspace: { git: repo, ref: 'main' },
        verify: `grep -q fixed task${i + 1}.txt`,
      };
    });
    const file = path.join(dir, 'jobs.jsonl');
    writeFileSync(file, jobs.map((j) => JSON.stringify(j)).join('\n'));
    const suite = readJobsFile(file, { batchId, models: ['gpt-4.1-mini', 'gpt-4.1'] });
    await submitBatch(stack.client, suite, { batchId, concurrency: 4 });

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // The printed URL carries the sign-in token as its query: open it once, then the pages by path.
    const base = new URL('/', dashboard.url).href;
    await page.goto(dashboard.url);
    await page.goto(`${base}b/${batchId}`);
    await until('the batch done', async () => (await page.locator('#progress').getAttribute('data-done')) === 'true');
    await page.screenshot({ path: path.join(DOCS, 'dashboard-batch.png'), fullPage: true });

    await page.goto(dashboard.url);
    await until('the sessions listed', async () => (await page.locator('#sessions tr[data-session]').count()) >= 14);
    await page.screenshot({ path: path.join(DOCS, 'dashboard-sessions.png') });

    await page.goto(`${base}s/${encodeURIComponent(fixed.sessionId)}`);
    await page.locator('[data-result]').waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(DOCS, 'dashboard-session.png'), fullPage: true });
    console.log(`wrote docs/dashboard-{sessions,session,batch}.png`);
  } finally {
    await browser.close();
    await dashboard.close();
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(workspaces, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
