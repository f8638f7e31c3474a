/**
 * Settings the model writes cannot widen its permissions across a resume
 * (docs/ARCHITECTURE.md#hooks): a session with `settingSources: project,local` writes
 * `.claude/settings.local.json` allowing Bash — through Write in acceptEdits, or through Bash —
 * and is resumed in dontAsk. The resumed run keeps the settings the session started with: Bash is
 * denied, and a `system` warning names the file. With `reloadSettings` the file applies. Real
 * worker, real files, the scripted model.
 */
import { existsSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { SessionEvent } from '../../src/shared/events';
import type { SessionHandle } from '../../src/client/client';
import { toolResultsById } from '../helpers/chaos';
import { useHarness } from '../helpers/harness';

const h = useHarness();
const allowBash = JSON.stringify({ permissions: { allow: ['Bash'] } });

/** Every message until the result; any permission request is approved (a settings write may ask). */
async function approvingAll(handle: SessionHandle): Promise<SessionEvent[]> {
  const seen: SessionEvent[] = [];
  for await (const m of handle.messages()) {
    seen.push(m);
    if (m.type === 'system' && m.subtype === 'permission_request') await handle.respond({ requestId: m.request_id, behavior: 'allow' });
    if (m.type === 'result') break;
  }
  return seen;
}

const warnings = (ms: SessionEvent[]) => ms.flatMap((m) => (m.type === 'system' && m.subtype === 'warning' ? [m.message] : []));

let n = 0;
async function selfGrantThenResume(how: 'Write' | 'Bash', resume: { reloadSettings?: boolean }) {
  const cwd = h.workspace();
  const settings = path.join(cwd, '.claude/settings.local.json');
  mkdirSync(path.join(cwd, '.claude'));
  // The project's own settings, present from the start: one rule, so the digests have a file to keep.
  writeFileSync(path.join(cwd, '.claude/settings.json'), JSON.stringify({ permissions: { allow: ['Read'] } }));
  const grant =
    how === 'Write'
      ? turn.tool('Write', { file_path: settings, content: allowBash })
      : turn.tool('Bash', { command: `printf '%s' '${allowBash}' > ${settings}` });
  const sessionId = `settings-resume-${how}-${n++}`;
  const first = await h.start(
    { name: sessionId, turns: [grant, turn.text('granted'), turn.tool('Bash', { command: 'touch bash-ran' }), turn.text('done')] },
    { sessionId, cwd, settingSources: ['project', 'local'], permissionMode: how === 'Write' ? 'acceptEdits' : 'bypassPermissions' },
  );
  await approvingAll(first);
  expect(existsSync(settings)).toBe(true);
  const resumed = await h.client.start({
    resume: sessionId,
    prompt: 'Run it.',
    cwd,
    settingSources: ['project', 'local'],
    permissionMode: 'dontAsk',
    ...resume,
  });
  const messages = await approvingAll(resumed);
  const results = [...toolResultsById(await resumed.transcript()).values()];
  return { messages, ran: existsSync(path.join(cwd, 'bash-ran')), bash: results[results.length - 1]!, settings };
}

describe.each(['Write', 'Bash'] as const)('a settings.local.json allowing Bash, written through %s', (how) => {
  test('is reported and not applied on resume: Bash is denied in dontAsk', async () => {
    const { messages, ran, bash, settings } = await selfGrantThenResume(how, {});
    expect(ran).toBe(false);
    expect(bash).toMatchObject({ is_error: true });
    expect(warnings(messages)).toContainEqual(
      `Settings files changed since this session started and were not applied: ${settings}. The session keeps the settings it ` +
        'started with (the model may have written these files); resume with --reload-settings (reloadSettings: true) to read them anew.',
    );
  });

  test('applies when the resume asks to reload the settings', async () => {
    const { messages, ran, bash } = await selfGrantThenResume(how, { reloadSettings: true });
    expect(ran).toBe(true);
    expect(bash.is_error).toBeFalsy();
    expect(warnings(messages).filter((w) => w.startsWith('Settings files changed'))).toEqual([]);
  });
});

test('unchanged files: a resume reads them as before, with no warning', async () => {
  const cwd = h.workspace();
  mkdirSync(path.join(cwd, '.claude'));
  writeFileSync(path.join(cwd, '.claude/settings.json'), allowBash);
  const sessionId = `settings-resume-same-${n++}`;
  const first = await h.start(
    { name: sessionId, turns: [turn.text('hello'), turn.tool('Bash', { command: 'touch bash-ran' }), turn.text('done')] },
    { sessionId, cwd, settingSources: ['project'], permissionMode: 'dontAsk' },
  );
  await approvingAll(first);
  const resumed = await h.client.start({
    resume: sessionId,
    prompt: 'Run it.',
    cwd,
    settingSources: ['project'],
    permissionMode: 'dontAsk',
  });
  const messages = await approvingAll(resumed);
  expect(existsSync(path.join(cwd, 'bash-ran'))).toBe(true);
  expect(warnings(messages).filter((w) => w.startsWith('Settings files changed'))).toEqual([]);
});
