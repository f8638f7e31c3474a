/**
 * The bypass corpus through the real worker with the sandbox on (ARCHITECTURE.md#bash-rules-on-a-real-parse):
 * a `durable-agent worker --roles tools` process with bubblewrap, a session whose scripted model
 * makes every call of the corpus, each aimed at a victim file of its own. Every victim must
 * survive and every call must be denied; control calls show the same session still runs what
 * its rules allow.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import { spawnWorker, toolResultsById, type WorkerProcess } from '../helpers/chaos';
import { startHarness, type Harness } from '../helpers/harness';
import { DENY_CORPUS, SMUGGLE_CORPUS } from './bypass-corpus';

jest.setTimeout(300_000);

let h: Harness;
let tools: { queue: string; proc: WorkerProcess };

beforeAll(async () => {
  h = await startHarness({ roles: ['workflow', 'model'] });
  const queue = `${h.taskQueue}-tools-sandboxed`;
  const proc = spawnWorker({
    address: h.address,
    modelUrl: h.model.url,
    bundlePath: '',
    name: 'sandboxed',
    roles: ['tools'],
    env: { DURABLE_AGENT_SANDBOX: 'required', DURABLE_AGENT_TASK_QUEUE: h.taskQueue, DURABLE_AGENT_TOOLS_TASK_QUEUE: queue },
  });
  tools = { queue, proc };
  await proc.ready;
}, 180_000);

afterAll(async () => {
  await tools?.proc.stop();
  await h?.close();
});

function denials(messages: SessionEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages) if (m.type === 'system' && m.subtype === 'permission_denied') out.set(m.tool_use_id, m.message);
  return out;
}

async function runCorpus(opts: {
  name: string;
  corpus: string[];
  victim: string;
  controls: string[];
  options: Record<string, unknown>;
}): Promise<{ ws: string; denied: Map<string, string>; results: Map<string, { content: unknown; is_error?: boolean }> }> {
  const ws = h.workspace();
  const commands = opts.corpus.map((c, i) => {
    writeFileSync(path.join(ws, `${opts.victim}${i}`), 'victim');
    return c.replaceAll('{V}', `${opts.victim}${i}`);
  });
  // The scripted model fills in `${NAME}` placeholders; `$${` is a literal `${`.
  const calls = [...commands, ...opts.controls].map((command, i) => ({
    id: `call_${i}`,
    name: 'Bash',
    arguments: { command: command.replaceAll('${', () => '$${') },
  }));
  const run = await h.run(
    { name: opts.name, turns: [turn.tools(calls), turn.text('done')] },
    { cwd: ws, toolsTaskQueue: tools.queue, ...opts.options },
  );
  expect(run.result).toMatchObject({ subtype: 'success' });
  return { ws, denied: denials(run.messages), results: toolResultsById(await run.handle.transcript()) as never };
}

test('Bash(rm:*) in bypassPermissions: every way of running rm is denied and its victim survives', async () => {
  const { ws, denied, results } = await runCorpus({
    name: 'deny-corpus',
    corpus: DENY_CORPUS,
    victim: 'v',
    controls: ['touch control-ran', 'git --version > control-git.txt'],
    options: { permissionMode: 'bypassPermissions', disallowedTools: ['Bash(rm:*)'] },
  });
  const survived = DENY_CORPUS.map((c, i) => ({ c, alive: existsSync(path.join(ws, `v${i}`)), denied: denied.has(`call_${i}`) }));
  expect(survived.filter((s) => !s.alive || !s.denied)).toEqual([]);
  expect(denied.size).toBe(DENY_CORPUS.length);
  // The controls ran: the rules block rm, not Bash.
  expect(existsSync(path.join(ws, 'control-ran'))).toBe(true);
  expect(existsSync(path.join(ws, 'control-git.txt'))).toBe(true);
  expect(results.get(`call_${DENY_CORPUS.length}`)?.is_error).toBeFalsy();
  // A denial says which rule and, for what cannot be checked, why.
  expect(denied.get('call_0')).toContain('Bash(rm:*)');
  const computed = DENY_CORPUS.indexOf('x=rm; $x -f {V}');
  expect(denied.get(`call_${computed}`)).toMatch(/computed at run time.*Bash\(rm:\*\)/s);
});

test('an echo/ls allow list in dontAsk: no second command gets past it', async () => {
  const { ws, denied } = await runCorpus({
    name: 'smuggle-corpus',
    corpus: SMUGGLE_CORPUS,
    victim: 'x',
    controls: ['echo allowed > control-echo.txt', 'ls -la | grep -c x > /dev/null; echo "a; rm x" > control-quoted.txt'],
    options: { permissionMode: 'dontAsk', allowedTools: ['Bash(echo:*)', 'Bash(ls:*)', 'Bash(grep:*)'] },
  });
  const survived = SMUGGLE_CORPUS.map((c, i) => ({ c, alive: existsSync(path.join(ws, `x${i}`)), denied: denied.has(`call_${i}`) }));
  expect(survived.filter((s) => !s.alive || !s.denied)).toEqual([]);
  expect(denied.size).toBe(SMUGGLE_CORPUS.length);
  expect(existsSync(path.join(ws, 'control-echo.txt'))).toBe(true);
  expect(existsSync(path.join(ws, 'control-quoted.txt'))).toBe(true);
});
