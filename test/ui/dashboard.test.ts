/**
 * The dashboard (ARCHITECTURE.md#dashboard) in a real browser: Debian's chromium driven by
 * playwright-core, against `startDashboard` on the harness's real dev server, worker and
 * scripted model. Each test gates on what the page shows, never on time.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { turn } from '../../src/testing/scripted-model';
import { startDashboard, type Dashboard } from '../../src/ui/server';
import { submitBatch } from '../../src/client/batch';
import { readJobsFile } from '../../src/client/jobs-file';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();
const RUN = Date.now().toString(36);
const UI = { timeout: 60_000 };

let browser: Browser;
let dashboard: Dashboard;
let base: string;
/** The action token: what `durable-agent ui` keeps in ~/.config/durable-agent/ui-token. */
let token: string;

beforeAll(async () => {
  dashboard = await startDashboard({ client: h.client, port: 0, pollMs: 250 });
  base = `http://127.0.0.1:${dashboard.port}`;
  token = new URL(dashboard.url).searchParams.get('token')!;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
});

/** A new browser page on `url`, signed in for actions as the printed URL signs a browser in (unless `signIn: false`). */
async function openPage(url: string, opts: { signIn?: boolean } = {}): Promise<{ page: Page; dialogs: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(opts.signIn === false ? url : `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`);
  return { page, dialogs, errors };
}

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');

test('the sessions page lists a session as it starts; its page shows text streaming before the turn completes', async () => {
  const { page, errors } = await openPage(`${base}/?text=${encodeURIComponent(`ui-stream-${RUN}`)}`);
  await page.locator('#total').waitFor(UI);
  expect(await page.locator('#sessions tbody tr[data-session]').count()).toBe(0);

  const gate = h.gate();
  const started = Date.now();
  const handle = await h.start(
    {
      name: `ui-stream-${RUN}`,
      turns: [
        { text: words(40, 'w'), tool_calls: [{ name: 'Bash', arguments: { command: gate.command } }], chunk_delay_ms: 60 },
        turn.text('all done'),
      ],
    },
    { sessionId: `ui-stream-${RUN}` },
  );
  const row = page.locator(`#sessions tr[data-session="${handle.sessionId}"]`);
  await row.waitFor(UI);
  console.log(`sessions page: row shown ${Date.now() - started} ms after start() was called`);
  expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('running');
  expect(await row.locator('td').nth(2).textContent()).toBe('gpt-4.1-mini');

  await row.locator('a').first().click();
  await page.waitForURL(`**/s/${handle.sessionId}`);
  // Text arrives token by token while the model streams: seen in the streaming bubble while the
  // turn cannot have completed (its Bash call waits for the gate this test has not released).
  const streaming = page.locator('[data-streaming] .text');
  await waitFor('streamed text on the page', async () => /w1\b/.test((await streaming.textContent().catch(() => '')) ?? ''));
  expect(await page.locator('[data-result]').count()).toBe(0);
  expect(await page.locator('#conversation .msg.assistant[data-seq]').count()).toBe(0);

  // The whole reply replaces the stream; the tool call shows with its input, then its result.
  const tool = page.locator('.tool[data-tool="Bash"]');
  await tool.waitFor(UI);
  expect(await tool.locator('pre.input').textContent()).toBe(gate.command);
  gate.release();
  await page.locator('[data-result]').waitFor(UI);
  expect(await page.locator('[data-result]').textContent()).toContain('all done');
  expect(await tool.locator('.state').textContent()).toBe('done');
  expect(await page.locator('[data-streaming]').count()).toBe(0);
  expect(Number(await page.locator('#cost-chart').getAttribute('data-points'))).toBe(2);
  expect(await page.locator('#temporal-link').getAttribute('href')).toBe(
    `http://localhost:8233/namespaces/default/workflows/${handle.sessionId}/${(await handle.workflow.describe()).runId}/history`,
  );
  expect(errors).toEqual([]);
  await page.close();
});

test('a pending request shows on the session page; Approve lets the tool run and the page shows its result', async () => {
  const handle = await h.start(
    { name: `ui-approve-${RUN}`, turns: [turn.tool('Bash', { command: 'echo ran-$((40+2))' }), turn.text('approved and done')] },
    { permissionMode: 'default' },
  );
  const { page, errors } = await openPage(`${base}/s/${encodeURIComponent(handle.sessionId)}`);
  const request = page.locator('[data-request="perm-1"]');
  await request.waitFor(UI);
  expect(await request.locator('pre').textContent()).toBe('echo ran-$((40+2))');
  expect(await page.locator('.tool[data-tool="Bash"] .result').textContent()).toBe('');

  await request.getByRole('button', { name: 'Approve' }).click();
  await waitFor('the approval outcome', async () => (await page.locator('#permission-outcome').textContent()) === 'perm-1 allowed');
  const output = page.locator('.tool[data-tool="Bash"] pre.output');
  await output.waitFor(UI);
  expect((await output.textContent())?.trim()).toBe('ran-42');
  await page.locator('[data-result]').waitFor(UI);
  await waitFor('the request gone from the page', async () => (await request.count()) === 0);
  expect(errors).toEqual([]);
  await page.close();
});

test('Deny with a message: the model receives the message as the tool result', async () => {
  const name = `ui-deny-${RUN}`;
  const handle = await h.start(
    { name, turns: [turn.tool('Bash', { command: 'git push --force' }), turn.text('ok, not pushing')] },
    { permissionMode: 'default' },
  );
  const { page } = await openPage(`${base}/s/${encodeURIComponent(handle.sessionId)}`);
  const request = page.locator('[data-request="perm-1"]');
  await request.waitFor(UI);
  // An answer the workflow refuses shows the workflow's reason.
  expect(
    await post(`/api/session/${encodeURIComponent(handle.sessionId)}/permission`, { requestId: 'perm-9', behavior: 'allow' }, page),
  ).toEqual({
    status: 409,
    body: {
      error: 'rejected: respondToPermission: no pending permission request perm-9 (pending: perm-1); it may have been answered already',
    },
  });
  await request.getByLabel('deny message').fill('Never force-push; open a PR instead.');
  await request.getByRole('button', { name: 'Deny' }).click();
  await waitFor('the denial outcome', async () => (await page.locator('#permission-outcome').textContent()) === 'perm-1 denied');
  await page.locator('[data-result]').waitFor(UI);
  expect(await page.locator('.tool[data-tool="Bash"] pre.output').textContent()).toContain('Never force-push; open a PR instead.');
  const second = h.requestsOf(name)[1]!;
  const toolMessage = second.body.messages.find((m) => m.role === 'tool');
  expect(JSON.stringify(toolMessage?.content)).toContain('Never force-push; open a PR instead.');
  // The session has ended: a late answer is refused, with the reason.
  const r = await post(`/api/session/${encodeURIComponent(handle.sessionId)}/permission`, { requestId: 'perm-1', behavior: 'allow' }, page);
  expect(r).toEqual({ status: 409, body: { error: `rejected: session ${handle.sessionId} has ended` } });
  await page.close();
});

test('controls: switch model, send a follow-up, interrupt — each shows its result and reaches the session', async () => {
  const name = `ui-controls-${RUN}`;
  const gate = h.gate();
  const handle = await h.start(
    { name, turns: [turn.text('first answer'), turn.tool('Bash', { command: gate.command }), turn.text('never reached')] },
    { interactive: true },
  );
  const { page, errors } = await openPage(`${base}/s/${encodeURIComponent(handle.sessionId)}`);
  await page.locator('[data-result]').waitFor(UI);
  const outcome = page.locator('#control-outcome');
  await page.locator('#model-form input').fill('gpt-4.1');
  await page.locator('#model-form button').click();
  await waitFor('the model outcome', async () => (await outcome.textContent()) === 'model set to gpt-4.1 from the next call');
  await page.locator('#send-form input').fill('please continue');
  await page.locator('#send-form button').click();
  await waitFor('the send outcome', async () => /^message accepted \(turn .+\)$/.test((await outcome.textContent()) ?? ''));
  await page.locator('#conversation .msg.user', { hasText: 'please continue' }).waitFor(UI);
  await page.locator('.notice', { hasText: 'model: gpt-4.1-mini → gpt-4.1 (set_model)' }).waitFor(UI);
  expect(h.requestsOf(name)[1]!.body.model).toBe('gpt-4.1');
  // The follow-up's turn runs a command that waits for the gate; Interrupt ends the turn.
  await page.locator('.tool[data-tool="Bash"]').waitFor(UI);
  await page.locator('#interrupt').click();
  await waitFor('the interrupt outcome', async () => (await outcome.textContent()) === 'interrupt sent');
  await waitFor("the interrupted turn's result", async () => (await page.locator('[data-result]').count()) === 2);
  expect(await page.locator('[data-result]').nth(1).getAttribute('data-result')).not.toBe('success');
  expect(h.requestsOf(name)).toHaveLength(2);
  gate.release();
  await handle.close();
  await handle.result();
  expect(errors).toEqual([]);
  await page.close();
});

test('a batch of 20 jobs: the progress bar advances to done, with a row per job and an export', async () => {
  const batchId = `ui-batch-${RUN}`;
  const gate = h.gate();
  const ws = h.workspace();
  const jobs = Array.from({ length: 20 }, (_, i) => {
    const id = `j${String(i + 1).padStart(2, '0')}`;
    const name = `${batchId}-${id}`;
    // The second half waits for the gate, so the page is seen part way before it is seen done.
    const turns = i < 10 ? [turn.text(`result ${id}`)] : [turn.tool('Bash', { command: gate.command }), turn.text(`result ${id}`)];
    h.model.addScenario({ name, turns });
    return { id, prompt: `${scenarioTag(name)} job`, permissionMode: 'bypassPermissions' };
  });
  const file = path.join(ws, 'jobs.jsonl');
  writeFileSync(file, jobs.map((j) => JSON.stringify(j)).join('\n'));
  await submitBatch(h.client, readJobsFile(file, { batchId, cwd: ws }), { batchId, concurrency: 20 });

  const { page, errors } = await openPage(`${base}/b/${batchId}`);
  const text = page.locator('#progress-text');
  await waitFor('10 of 20 finished on the page', async () => (await text.textContent().catch(() => '')) === '10/20 finished');
  expect(await page.locator('#progress').getAttribute('data-done')).toBe('false');
  expect(Number(await page.locator('#progress .seg-running').getAttribute('data-count'))).toBe(10);
  gate.release();
  await waitFor('20 of 20 finished on the page', async () => (await text.textContent()) === '20/20 finished');
  expect(await page.locator('#progress').getAttribute('data-done')).toBe('true');
  await waitFor('20 completed job rows', async () => (await page.locator('#jobs [data-job] [data-status="completed"]').count()) === 20);
  expect(await page.locator('#jobs [data-job="j07"] a').getAttribute('href')).toBe(`/s/${encodeURIComponent(`${batchId}/j07`)}`);
  const exported = await page.evaluate(
    async (href) => (await fetch(href)).text(),
    (await page.locator('#export-jsonl').getAttribute('href'))!,
  );
  const lines = exported
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; status: string; result: string });
  expect(lines).toHaveLength(20);
  expect(lines[6]).toMatchObject({ id: 'j07', status: 'completed', result: 'result j07', verdict: null, model: 'gpt-4.1-mini' });
  // The report: one model, every job counted; no verify, so no resolved share.
  const report = page.locator('#report tr[data-model="gpt-4.1-mini"] td');
  await waitFor(
    'the report row',
    async () =>
      (await report
        .nth(1)
        .textContent()
        .catch(() => '')) === '20',
  );
  expect(await report.nth(2).textContent()).toBe('–');
  expect(await report.nth(3).textContent()).toBe('0');
  expect(errors).toEqual([]);
  await page.close();
});

test('a batch on two models: the report has a row per model and the chart a pair of bars per model', async () => {
  const batchId = `ui-models-${RUN}`;
  const ws = h.workspace();
  const tasks = ['t1', 't2', 't3'].map((id) => {
    const name = `${batchId}-${id}`;
    h.model.addScenario({ name, turns: [turn.text(`result ${id}`)] });
    return { id, prompt: `${scenarioTag(name)} task`, permissionMode: 'bypassPermissions' };
  });
  const file = path.join(ws, 'suite.jsonl');
  writeFileSync(file, tasks.map((j) => JSON.stringify(j)).join('\n'));
  const jobs = readJobsFile(file, { batchId, cwd: ws, models: ['gpt-4.1-mini', 'openai/gpt-4.1'] });
  expect(jobs.jobs.map((j) => j.id)).toEqual([
    't1:gpt-4.1-mini',
    't1:openai_gpt-4.1',
    't2:gpt-4.1-mini',
    't2:openai_gpt-4.1',
    't3:gpt-4.1-mini',
    't3:openai_gpt-4.1',
  ]);
  await submitBatch(h.client, jobs, { batchId, concurrency: 6 });

  const { page, errors } = await openPage(`${base}/b/${batchId}`);
  await waitFor(
    '6 of 6 finished on the page',
    async () =>
      (await page
        .locator('#progress-text')
        .textContent()
        .catch(() => '')) === '6/6 finished',
  );
  const rows = page.locator('#report tbody tr[data-model]');
  await waitFor('a report row per model', async () => (await rows.count()) === 2);
  expect(await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)))).toEqual([
    ['gpt-4.1-mini', '3'],
    ['openai/gpt-4.1', '3'],
  ]);
  expect(await page.locator('#report-chart rect[data-bar="resolved"]').count()).toBe(2);
  expect(await page.locator('#report-chart rect[data-bar="cost"]').count()).toBe(2);
  expect(await page.locator('#report-chart text[data-model="openai/gpt-4.1"]').textContent()).toBe('openai/gpt-4.1');
  expect(errors).toEqual([]);
  await page.close();
});

test('a tool output holding <script> renders as text: no dialog, no script element', async () => {
  const payload = '<script>alert(1)</script><img src=x onerror="alert(2)">';
  const handle = await h.start(
    {
      name: `ui-xss-${RUN}`,
      turns: [turn.tool('Bash', { command: `printf '%s' '${payload}'` }), turn.text(`Here it is: ${payload}`)],
    },
    {},
  );
  await handle.result();
  const { page, dialogs, errors } = await openPage(`${base}/s/${encodeURIComponent(handle.sessionId)}`);
  await page.locator('[data-result]').waitFor(UI);
  expect(await page.locator('.tool[data-tool="Bash"] pre.output').textContent()).toBe(payload);
  expect(await page.locator('[data-result] .text').textContent()).toBe(`Here it is: ${payload}`);
  expect(await page.locator('#conversation script, #conversation img').count()).toBe(0);
  expect(dialogs).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
});

/** A POST from inside the page (its origin and the page's CSRF token), unless `csrf` is given. */
async function post(pathname: string, body: unknown, page: Page, csrf?: string): Promise<{ status: number; body: { error?: string } }> {
  return page.evaluate(
    async ({ pathname, body, csrf }) => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string } } }).document;
      const token = csrf ?? doc.querySelector('meta[name="csrf-token"]').getAttribute('content');
      const res = await fetch(pathname, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': token },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    },
    { pathname, body, csrf },
  );
}

test('bad input is refused by name: filters, fields, actions without the CSRF token', async () => {
  const bad = await fetch(`${base}/api/sessions?status=sleeping`);
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toMatch(/^status: expected one of running, waiting_for_approval/);
  const quote = await fetch(`${base}/api/sessions?model=${encodeURIComponent("x' OR 1=1")}`);
  expect(quote.status).toBe(400);
  expect(((await quote.json()) as { error: string }).error).toMatch(/^model: /);
  expect((await fetch(`${base}/api/session/no-such-session-${RUN}`)).status).toBe(404);

  const handle = await h.start({ name: `ui-bad-${RUN}`, turns: [turn.text('fine')] }, {});
  await handle.result();
  const { page } = await openPage(`${base}/s/${encodeURIComponent(handle.sessionId)}`);
  const url = `/api/session/${encodeURIComponent(handle.sessionId)}`;
  expect(await post(`${url}/send`, { text: 'hi', colour: 'red' }, page)).toEqual({
    status: 400,
    body: { error: expect.stringMatching(/^colour: not a field of send/) },
  });
  expect(await post(`${url}/model`, { model: '' }, page)).toEqual({ status: 400, body: { error: 'model: expected a non-empty string' } });
  expect(await post(`${url}/permission`, { requestId: 'perm-1', behavior: 'maybe' }, page)).toEqual({
    status: 400,
    body: { error: 'behavior: expected allow or deny, got "maybe"' },
  });
  // A session that has ended takes no follow-up.
  expect(await post(`${url}/send`, { text: 'more please' }, page)).toEqual({
    status: 409,
    body: { error: `rejected: session ${handle.sessionId} has ended` },
  });
  // Without the page's CSRF token (what a cross-site form would send) nothing happens.
  expect(await post(`${url}/interrupt`, {}, page, 'forged')).toEqual({
    status: 403,
    body: { error: expect.stringMatching(/X-CSRF-Token/) },
  });
  const form = await fetch(`${base}${url}/interrupt`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${token}` },
    body: 'a=1',
  });
  expect(form.status).toBe(403);
  // A page reached under another host name (DNS rebinding) is refused.
  const rebinding = await new Promise<number>((resolve, reject) => {
    const req = http.get(`${base}/api/config`, { headers: { host: `evil.example:${dashboard.port}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  expect(rebinding).toBe(421);
  await page.close();
});

test('actions need the action token, which no GET hands out: the page and its CSRF token are not enough', async () => {
  const handle = await h.start(
    { name: `ui-token-${RUN}`, turns: [turn.tool('Bash', { command: 'echo approved-by-someone' }), turn.text('done')] },
    { permissionMode: 'default' },
  );
  await waitFor('the pending request', async () => (await handle.pendingPermissions()).length === 1);
  const url = `/api/session/${encodeURIComponent(handle.sessionId)}/permission`;
  const answer = JSON.stringify({ requestId: 'perm-1', behavior: 'allow', always: true });
  // What a command on this host did (issue 39): fetch the page, take its CSRF token, approve "always".
  const html = await (await fetch(`${base}/s/${encodeURIComponent(handle.sessionId)}`)).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(html)![1]!;
  const forged = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, origin: base },
    body: answer,
  });
  expect(forged.status).toBe(401);
  expect(((await forged.json()) as { error: string }).error).toMatch(
    /^actions need the dashboard token: open the URL printed by `durable-agent ui`/,
  );
  for (const wrong of [{ authorization: 'Bearer wrong' }, { cookie: 'da_token=wrong' }] as Record<string, string>[]) {
    const r = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, ...wrong },
      body: answer,
    });
    expect(r.status).toBe(401);
  }
  expect((await fetch(`${base}/?token=wrong`, { redirect: 'manual' })).status).toBe(401);
  expect(await handle.pendingPermissions()).toHaveLength(1);

  // A browser that was not signed in sees the page read-only, and its Approve is refused the same way.
  const { page, errors } = await openPage(`${base}/s/${encodeURIComponent(handle.sessionId)}`, { signIn: false });
  await page.locator('#readonly').waitFor(UI);
  const request = page.locator('[data-request="perm-1"]');
  await request.waitFor(UI);
  await request.getByRole('button', { name: 'Approve' }).click();
  await waitFor('the refusal on the page', async () =>
    /actions need the dashboard token/.test((await page.locator('#permission-outcome').textContent()) ?? ''),
  );
  expect(await handle.pendingPermissions()).toHaveLength(1);

  // Opening the printed URL signs it in (an HttpOnly cookie the page's script cannot read); then Approve works.
  await page.goto(dashboard.url);
  expect(page.url()).toBe(`${base}/`);
  expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe('');
  await page.goto(`${base}/s/${encodeURIComponent(handle.sessionId)}`);
  expect(await page.locator('#readonly').count()).toBe(0);
  await request.getByRole('button', { name: 'Approve' }).click();
  await waitFor('the approval outcome', async () => (await page.locator('#permission-outcome').textContent()) === 'perm-1 allowed');
  expect((await handle.result()).subtype).toBe('success');
  expect(errors).toEqual([]);
  await page.close();
});

test('with a token: a request without it is refused; the printed URL signs the browser in', async () => {
  await expect(startDashboard({ client: h.client, host: '0.0.0.0', port: 0 })).rejects.toThrow(
    /--host 0\.0\.0\.0: binding beyond this machine needs --token/,
  );
  const secured = await startDashboard({ client: h.client, port: 0, token: `tok-${RUN}` });
  try {
    const root = `http://127.0.0.1:${secured.port}`;
    for (const p of ['/', '/api/sessions', '/assets/app.js', `/api/session/x/events`]) {
      const r = await fetch(`${root}${p}`);
      expect([p, r.status]).toEqual([p, 401]);
    }
    expect((await fetch(`${root}/api/sessions`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${root}/api/sessions`, { headers: { authorization: `Bearer tok-${RUN}` } })).status).toBe(200);
    const { page, errors } = await openPage(secured.url);
    await page.locator('#total').waitFor(UI);
    expect(page.url()).toBe(`${root}/`);
    expect(errors).toEqual([]);
    await page.close();
  } finally {
    await secured.close();
  }
});
