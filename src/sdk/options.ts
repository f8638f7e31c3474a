/**
 * The SDK's `Options` mapped onto session options, before anything starts: a key we do not
 * support is refused by name (`option X is not supported by durable-agent: …`), a value we do not
 * support likewise; nothing is silently dropped (src/sdk/option-support.ts has the list).
 */
import path from 'node:path';
import { ConfigError } from '../shared/config-error';
import type { SessionOptions } from '../shared/config';
import { HARMLESS_VALUES, OPTION_SUPPORT } from './option-support';
import type { ConnectOptions } from '../client/client';
import type { CanUseTool } from '../client/permissions';
import { splitHooks, type HookCallbackTable, type SplitHooks } from '../client/hook-callbacks';
import { splitMcpServers, type SdkServerOption } from '../client/client-tools';
import type { Options, SDKOptions, SystemPromptOption } from './types';

/** What `query()` needs besides the session's own options. */
export interface MappedOptions {
  session: Omit<SessionOptions, 'prompt'> & { cwd: string };
  /** `continue`: resume the newest session started in `session.cwd`. */
  continueLatest: boolean;
  /**
   * `resumeSessionAt` (with `resume` and `forkSession: true`): fork at the turn holding this
   * message; the fork's folder is restored from that turn's checkpoint, so `session.cwd` is not sent.
   */
  resumeSessionAt?: string;
  allowBypass: boolean;
  abortController?: AbortController;
  stderr?: (data: string) => void;
  canUseTool?: CanUseTool;
  /** The functions of `hooks`, answered by this client; the session carries their declaration (`clientHooks`). */
  hookCallbacks?: HookCallbackTable;
  /**
   * The in-process servers of `mcpServers` (`type: 'sdk'`), served by this client; the session
   * carries their tools' declaration (`clientTools`), made when query() connects them.
   */
  sdkServers?: Record<string, SdkServerOption>;
  connection?: ConnectOptions;
  client?: Options['client'];
}

/** The SDK's marker between the cacheable and the per-session part of a `string[]` prompt. */
const SYSTEM_PROMPT_DYNAMIC_BOUNDARY = '__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__';

export function refuse(option: string, why: string): ConfigError {
  return new ConfigError(`option ${option} is not supported by durable-agent: ${why}`, option.split(/[:. ]/)[0]!);
}

/** SDK keys that are session options of the same name and meaning. */
const SAME_AS_SESSION = [
  'model',
  'maxTurns',
  'maxBudgetUsd',
  'allowedTools',
  'disallowedTools',
  'additionalDirectories',
  'settingSources',
  'resume',
  'forkSession',
  'sessionId',
  'includePartialMessages',
  'sandbox',
  'agents',
  'outputFormat',
] as const satisfies readonly (keyof SDKOptions & keyof SessionOptions)[];

export function mapOptions(options: Options, defaultCwd: string): MappedOptions {
  refuseUnsupportedKeys(options);
  const o = options;
  if (o.permissionMode === 'auto')
    throw refuse(
      "permissionMode 'auto'",
      "there is no permission classifier; use 'default', 'acceptEdits' or 'dontAsk' with allowedTools rules",
    );
  if (o.permissionMode === 'bypassPermissions' && o.allowDangerouslySkipPermissions !== true) {
    throw new ConfigError(
      "permissionMode: 'bypassPermissions' runs every tool call without asking; set allowDangerouslySkipPermissions: true to confirm",
      'permissionMode',
    );
  }
  if (o.fallbackModel?.includes(',')) throw refuse('fallbackModel (a comma-separated list)', 'give one fallback model');
  const { remote: mcpServers, sdk: sdkServers } = o.mcpServers === undefined ? {} : splitMcpServers(o.mcpServers);
  if (o.continue && o.resume !== undefined)
    throw new ConfigError('continue: cannot be combined with resume (the SDK makes them exclusive too)', 'continue');
  const forkAt = o.resumeSessionAt === undefined ? undefined : checkResumeSessionAt(o);
  if ((o as { clientHooks?: unknown }).clientHooks !== undefined)
    throw new ConfigError('clientHooks: query() declares it from the functions in `hooks`; pass the callbacks there', 'clientHooks');
  if ((o as { clientTools?: unknown }).clientTools !== undefined)
    throw new ConfigError(
      "clientTools: query() declares it from the in-process servers in `mcpServers` (type 'sdk', createSdkMcpServer); pass them there",
      'clientTools',
    );
  const hooks: SplitHooks | undefined = o.hooks === undefined ? undefined : splitHooks(o.hooks);
  const thinkingTokens = thinkingBudget(o);
  const asAgent = o.agent === undefined ? {} : mainThreadAgent(o);
  // Our own options (interactive, retry, compaction, …) go through as they are; parseSessionConfig validates them.
  const sdkKeys = new Set<string>([...Object.keys(OPTION_SUPPORT), 'connection', 'client']);
  const ours = Object.fromEntries(Object.entries(o).filter(([k]) => !sdkKeys.has(k))) as Omit<SessionOptions, 'prompt' | 'cwd'>;
  const same = Object.fromEntries(SAME_AS_SESSION.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
  const session: MappedOptions['session'] = {
    ...ours,
    ...same,
    // As the SDK's: a relative `cwd` is the caller's working directory joined with it.
    cwd: typeof o.cwd === 'string' ? path.resolve(defaultCwd, o.cwd) : (o.cwd ?? defaultCwd),
    ...(o.permissionMode !== undefined ? { permissionMode: o.permissionMode } : {}),
    ...(o.fallbackModel !== undefined ? { fallbackModel: o.fallbackModel } : {}),
    ...(thinkingTokens !== undefined ? { maxThinkingTokens: thinkingTokens } : {}),
    ...(o.env !== undefined ? { env: definedValues(o.env) } : {}),
    ...(o.systemPrompt !== undefined ? { systemPrompt: mapSystemPrompt(o.systemPrompt) } : {}),
    ...(Array.isArray(o.tools) ? { tools: o.tools } : {}),
    ...(hooks ? { hooks: hooks.commands } : {}),
    ...(hooks?.declaration ? { clientHooks: hooks.declaration } : {}),
    ...(mcpServers !== undefined ? { mcpServers: mcpServers as SessionOptions['mcpServers'] } : {}),
    ...(typeof o.settings === 'string' ? { settingsFile: o.settings } : {}),
    ...asAgent,
  };
  return {
    session,
    continueLatest: o.continue === true,
    ...(forkAt !== undefined ? { resumeSessionAt: forkAt } : {}),
    allowBypass: o.allowDangerouslySkipPermissions === true,
    ...(o.abortController ? { abortController: o.abortController } : {}),
    ...(o.stderr ? { stderr: o.stderr } : {}),
    ...(o.canUseTool ? { canUseTool: o.canUseTool } : {}),
    ...(hooks?.callbacks ? { hookCallbacks: hooks.callbacks } : {}),
    ...(sdkServers ? { sdkServers } : {}),
    ...(o.connection ? { connection: o.connection } : {}),
    ...(o.client ? { client: o.client } : {}),
  };
}

/**
 * `resumeSessionAt: UUID`: a fork (ARCHITECTURE.md#checkpoints) at the turn holding that message,
 * whose folder is the checkpoint's. Rewinding a session in place would overwrite its own folder,
 * so it goes with `resume` and `forkSession: true`; `cwd` and `workspace` would name another folder.
 */
function checkResumeSessionAt(o: Options): string {
  const uuid = o.resumeSessionAt;
  if (typeof uuid !== 'string' || uuid.trim() === '') {
    throw new ConfigError('resumeSessionAt: expected the uuid of a message of the resumed session', 'resumeSessionAt');
  }
  if (o.resume === undefined) {
    throw new ConfigError('resumeSessionAt: goes with resume (the id of the session to fork) and forkSession: true', 'resumeSessionAt');
  }
  if (o.forkSession !== true) {
    throw refuse(
      'resumeSessionAt without forkSession: true',
      `resuming session ${o.resume} in its own folder at an earlier message would overwrite the files of its later turns; set forkSession: true for a new session from that message, with its folder restored from that turn's checkpoint`,
    );
  }
  for (const key of ['cwd', 'workspace'] as const) {
    if ((o as Record<string, unknown>)[key] !== undefined) {
      throw new ConfigError(
        `resumeSessionAt: cannot be combined with ${key}: the fork works in a copy of ${o.resume}'s folder at that turn, restored on a tools host`,
        'resumeSessionAt',
      );
    }
  }
  return uuid;
}

/**
 * `agent`: the main thread runs as one of `agents`, as the SDK does — its prompt is the system
 * prompt, its tools the tools (never more than `tools`), its model the model (`inherit` or absent:
 * `model`). Like a subagent, an agent whose tools leave out `Task` cannot start others.
 */
function mainThreadAgent(o: Options): Partial<MappedOptions['session']> {
  const name = o.agent;
  if (typeof name !== 'string' || name === '') throw new ConfigError('agent: must be the name of one of agents', 'agent');
  const agents = (o.agents && typeof o.agents === 'object' ? o.agents : {}) as Record<
    string,
    { prompt?: unknown; tools?: unknown; model?: unknown } | undefined
  >;
  const def = Object.hasOwn(agents, name) ? agents[name] : undefined;
  if (!def) {
    const known = Object.keys(agents);
    throw new ConfigError(
      `agent: no agent named '${name}' in agents (${known.length ? `defined: ${known.join(', ')}` : 'none defined'})`,
      'agent',
    );
  }
  if (o.systemPrompt !== undefined)
    throw new ConfigError('agent and systemPrompt: give one of them (the agent’s prompt is the system prompt)', 'agent');
  const tools = Array.isArray(def.tools) ? (def.tools as string[]) : undefined;
  const narrowed = tools && Array.isArray(o.tools) ? tools.filter((t) => (o.tools as string[]).includes(t) || t === 'Task') : tools;
  const model = typeof def.model === 'string' && def.model !== 'inherit' ? def.model : undefined;
  return {
    ...(typeof def.prompt === 'string' ? { systemPrompt: def.prompt } : {}),
    ...(narrowed ? { tools: narrowed } : {}),
    ...(tools && !tools.includes('Task') ? { disallowedTools: [...(o.disallowedTools ?? []), 'Task'] } : {}),
    ...(model ? { model } : {}),
  };
}

function refuseUnsupportedKeys(options: Options): void {
  for (const [key, value] of Object.entries(options)) {
    const support = OPTION_SUPPORT[key as keyof SDKOptions];
    if (!support || support.status === 'supported' || value === undefined) continue;
    if (HARMLESS_VALUES[key as keyof SDKOptions]?.includes(value)) continue;
    throw refuse(key, support.status === 'later' ? `supported later (issue ${support.issue}); ${support.note}` : support.note);
  }
  if (options.persistSession === false) throw refuse('persistSession: false', 'every session is persisted in Temporal history');
  if (options.permissionPrompts === 'none')
    throw refuse("permissionPrompts: 'none'", "use permissionMode: 'dontAsk' (asks become denials)");
  if (options.settings !== undefined && typeof options.settings !== 'string') {
    throw refuse('settings (an inline object)', 'write it to a file on the tools worker and pass its path');
  }
  if (options.thinking && 'display' in options.thinking && options.thinking.display !== undefined) {
    throw refuse('thinking.display', 'reasoning text is passed on as the endpoint returns it');
  }
}

function thinkingBudget(o: Pick<SDKOptions, 'maxThinkingTokens' | 'thinking' | 'effort'>): number | undefined {
  const given = (['maxThinkingTokens', 'thinking', 'effort'] as const).filter((k) => o[k] !== undefined);
  if (given.length > 1) {
    throw new ConfigError(`${given.join(' and ')}: give one of them (each sets the reasoning_effort sent to the endpoint)`, given[0]!);
  }
  if (o.maxThinkingTokens !== undefined) return o.maxThinkingTokens;
  if (o.thinking) {
    if (o.thinking.type === 'disabled') return 0;
    if (o.thinking.type === 'adaptive') return undefined;
    if (o.thinking.budgetTokens === undefined) throw new ConfigError('thinking.budgetTokens: required with type enabled', 'thinking');
    return o.thinking.budgetTokens;
  }
  // The bands of reasoningEffortFor (src/activities/model/index.ts): low ≤ 4,096 < medium ≤ 16,384 < high.
  if (o.effort) return { low: 4_096, medium: 16_384, high: 32_768, xhigh: 32_768, max: 32_768 }[o.effort];
  return undefined;
}

function mapSystemPrompt(sp: SystemPromptOption): NonNullable<SessionOptions['systemPrompt']> {
  const joined = (p: string | string[]) => (typeof p === 'string' ? p : p.filter((b) => b !== SYSTEM_PROMPT_DYNAMIC_BOUNDARY).join('\n\n'));
  if (typeof sp === 'string' || Array.isArray(sp)) return joined(sp);
  // Our system prompt is built once at session start and carried: always the SDK's `snapshot: true`.
  if (sp.snapshot === false) throw refuse('systemPrompt.snapshot: false', 'a session records its system prompt once, at start');
  if (sp.type === 'custom') return joined(sp.prompt);
  if (sp.excludeDynamicSections)
    throw refuse(
      'systemPrompt.excludeDynamicSections',
      'our coding prompt keeps cwd and date in the system prompt; pass your own string instead',
    );
  return { type: 'preset', preset: sp.preset, ...(sp.append !== undefined ? { append: sp.append } : {}) };
}

function definedValues(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
