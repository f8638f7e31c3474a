/** Running the hook activities in a real activity context (MockActivityEnvironment), on real temp dirs and processes. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Info } from '@temporalio/activity';
import type { Logger } from '@temporalio/common';
import { createHookActivities, type HookActivityDeps } from '../../src/activities/hooks';
import type { HookRun, HooksSettings, LoadedSettings, LoadSettingsInput, RunHooksInput } from '../../src/shared/hooks';

export function runHooks(
  input: Partial<RunHooksInput> & Pick<RunHooksInput, 'event' | 'cwd'>,
  deps: HookActivityDeps = {},
  env = new MockActivityEnvironment(),
): Promise<HookRun[]> {
  const acts = createHookActivities(deps);
  const full: RunHooksInput = {
    sessionId: 'session-hooks-test',
    permissionMode: 'default',
    hooks: {},
    settingSources: [],
    payload: {},
    env: {},
    ...input,
  };
  return env.run(acts.runHooks, full);
}

export function loadSettings(
  input: Partial<LoadSettingsInput> & Pick<LoadSettingsInput, 'cwd'>,
  deps: HookActivityDeps = {},
): Promise<LoadedSettings> {
  return new MockActivityEnvironment().run(createHookActivities(deps).loadSettings, { settingSources: [], hooks: {}, ...input });
}

/** A mock environment that beats at least every 100 ms (heartbeatTimeout 400 ms) and records what it logs. */
export function activityEnv(info: Partial<Info> = {}): { env: MockActivityEnvironment; heartbeats: unknown[]; logged: string[] } {
  const logged: string[] = [];
  const record = (message: string) => void logged.push(message);
  const logger: Logger = { log: (_l, m) => record(m), trace: record, debug: record, info: record, warn: record, error: record };
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 400, ...info }, { logger });
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => heartbeats.push(d));
  return { env, heartbeats, logged };
}

/** One command hook per matcher entry. */
export function commandHooks(event: string, entries: { matcher?: string; command: string; timeout?: number }[]): HooksSettings {
  return {
    [event]: entries.map(({ matcher, command, timeout }) => ({
      ...(matcher !== undefined ? { matcher } : {}),
      hooks: [{ type: 'command' as const, command, ...(timeout ? { timeout } : {}) }],
    })),
  };
}

export function writeJson(file: string, value: unknown): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

/** Is a process alive (a zombie awaiting its reaper counts as dead)? */
export function alive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}
