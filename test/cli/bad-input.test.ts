/**
 * Bad input (issue 39): a prompt over the limit exits 2 before anything starts, at every entry; a
 * missing `--cwd` exits 2 when the CLI can see the tools host's filesystem, and otherwise the
 * session ends at once with an error result naming the folder; control characters from model and
 * tool text are shown as visible escapes by watch, show and approve. Real server, worker and CLI.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { SessionNotFoundError } from '../../src/client/client';
import { JobsFileError, readJobsFile } from '../../src/client/jobs-file';
import { ConfigError, MAX_PROMPT_BYTES } from '../../src/shared/config';
import { scenarioTag, useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';
import { cli, cliEnv } from './helpers';
import { LiveText } from '../../src/cli/render-live';

const h = useHarness();
const RUN = Date.now().toString(36);
/** Nothing listens here: a command that got as far as connecting would fail with exit 1, not 2. */
const NOWHERE = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' };
const BIG = 'x'.repeat(MAX_PROMPT_BYTES + 1);
const SIZE = `prompt: ${MAX_PROMPT_BYTES + 1} bytes (1.0 MiB) is over the limit of ${MAX_PROMPT_BYTES} bytes (1 MiB)`;

describe('a prompt over 1 MiB', () => {
  test('the CLI exits 2 with its size and the limit, before connecting (argument or stdin)', async () => {
    const ws = h.workspace();
    const r = await cli(['run', '--cwd', ws], { env: NOWHERE, input: BIG });
    expect(r.stderr).toContain(SIZE);
    expect(r.code).toBe(2);
    // Multi-byte text is measured in bytes.
    const wide = await cli(['run', '--cwd', ws], { env: NOWHERE, input: 'é'.repeat(MAX_PROMPT_BYTES / 2 + 1) });
    expect(wide.stderr).toContain(`prompt: ${MAX_PROMPT_BYTES + 2} bytes`);
    expect(wide.code).toBe(2);
    // resume takes its prompt as words (each argument at most 128 KiB on Linux).
    const words = Array.from({ length: 9 }, () => 'y'.repeat(120_000));
    const resumed = await cli(['resume', 'some-id', ...words], { env: NOWHERE });
    expect(resumed.stderr).toContain(`prompt: ${9 * 120_000 + 8} bytes`);
    expect(resumed.code).toBe(2);
  });

  test('the client refuses it and starts nothing; a follow-up over the limit is refused too', async () => {
    const sessionId = `big-prompt-${RUN}`;
    const e = await h.client.start({ prompt: BIG, cwd: h.workspace(), sessionId }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).toContain(SIZE);
    await expect(h.client.get(sessionId)).rejects.toBeInstanceOf(SessionNotFoundError);
    const handle = await h.start({ name: `big-follow-up-${RUN}`, turns: [turn.text('ok')] }, { interactive: true });
    await expect(handle.send(BIG)).rejects.toThrow(`text: ${MAX_PROMPT_BYTES + 1} bytes`);
    await handle.close();
  });

  test('a jobs file names the line', () => {
    const ws = h.workspace();
    const file = path.join(ws, 'jobs.jsonl');
    writeFileSync(file, [JSON.stringify({ prompt: 'small' }), JSON.stringify({ prompt: BIG })].join('\n'));
    const e = (() => {
      try {
        readJobsFile(file, { cwd: ws });
      } catch (x) {
        return x as JobsFileError;
      }
      throw new Error('accepted');
    })();
    expect(e).toBeInstanceOf(JobsFileError);
    expect(e.message).toBe(`${file}:2: ${SIZE}; put large inputs in a file in the workspace and name it in the prompt`);
  });
});

describe('a missing working directory', () => {
  test('the CLI exits 2 naming it, when this machine is the tools host (no toolsTaskQueue)', async () => {
    const ws = h.workspace();
    const file = path.join(ws, 'a-file');
    writeFileSync(file, '');
    const missing = await cli(['run', '--cwd', path.join(ws, 'nope'), 'hello'], { env: NOWHERE });
    expect(missing.stderr).toContain(`--cwd: ${path.join(ws, 'nope')} does not exist`);
    expect(missing.code).toBe(2);
    const notDir = await cli(['run', '--cwd', file, 'hello'], { env: NOWHERE });
    expect(notDir.stderr).toContain(`--cwd: ${file} is not a directory`);
    expect(notDir.code).toBe(2);
  });

  test('otherwise the tools host refuses it: the session ends at once with an error result naming the folder', async () => {
    const folder = path.join(h.workspace(), 'gone');
    const { result } = await h.run({ name: `missing-cwd-${RUN}`, turns: [turn.text('never')] }, { cwd: folder });
    expect(result).toMatchObject({ is_error: true, exit_reason: 'setup_error', num_turns: 0 });
    expect(result.errors).toEqual([
      expect.stringContaining(`The session could not start: cwd: ${folder} does not exist on the tools host`),
    ]);
    expect(h.requestsOf(`missing-cwd-${RUN}`)).toHaveLength(0);
  });
});

describe('control characters from model and tool text', () => {
  const ESC = '\x1b';
  const disguised = `echo harmless${ESC}[2K\r${ESC}[31mrm -rf ~${ESC}]0;title\x07 \u202egnp.exe`;
  const said = `All ${ESC}[31mgood${ESC}[0m\x08\x08, trust me`;

  test('watch, show and approve print them as visible escapes, never raw', async () => {
    const name = `ctl-${RUN}`;
    const ws = h.workspace();
    h.model.addScenario({
      name,
      turns: [{ text: said, tool_calls: [{ name: 'Bash', arguments: { command: disguised } }] }, turn.text('done')],
    });
    const handle = await h.client.start({ prompt: `${scenarioTag(name)} go`, cwd: ws, permissionMode: 'default' });
    const env = cliEnv(h);
    await waitFor('the pending request', async () => (await handle.pendingPermissions()).length === 1);

    const approve = await cli(['approve', handle.sessionId], { env });
    expect(approve.code).toBe(0);
    await handle.result();
    const watch = await cli(['watch', handle.sessionId], { env });
    const show = await cli(['show', handle.sessionId], { env });
    for (const [command, r] of [
      ['approve', approve],
      ['watch', watch],
      ['show', show],
    ] as const) {
      // No escape, carriage return, backspace, bell or bidi override reaches the terminal.
      expect([command, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(r.stdout)]).toEqual([command, false]);
      expect([command, r.stdout]).toEqual([
        command,
        expect.stringContaining('echo harmless\\x1b[2K\\r\\x1b[31mrm -rf ~\\x1b]0;title\\x07 \\u202egnp.exe'),
      ]);
    }
    for (const r of [watch, show]) expect(r.stdout).toContain('All \\x1b[31mgood\\x1b[0m\\x08\\x08, trust me');
    // Streamed replies are escaped delta by delta.
    const live = new LiveText({ color: false });
    expect(live.write({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: said } })).toBe(
      'All \\x1b[31mgood\\x1b[0m\\x08\\x08, trust me',
    );
    // --json stays JSON, which escapes them its own way.
    const json = await cli(['watch', handle.sessionId, '--json'], { env });
    expect(json.stdout).toContain('\\u001b[31mgood');
  });
});
