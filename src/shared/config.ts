/**
 * Session options: the Claude Agent SDK's names (camelCase) plus ours. Strict: an unknown field
 * is an error that names it, so a typo never silently changes a long unattended run.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import { CompactionConfig } from './compaction-config';
import { ConfigError } from './config-error';
import { PermissionRuleList } from './permissions/rules';
import { HooksSettings } from './permissions/settings';
import { ClientHooks } from './client-hooks-config';
import { ClientTools, clientToolName } from './client-tools-config';
import { PermissionMode } from './permission-mode';
import { SandboxOption } from './sandbox';
import { McpServersOption, refuseMcpSecretsAsRecorded } from './mcp';
import { utf8Length } from './payload';
import { VerifyOption, WorkspaceOption } from './workspace';

export { ConfigError };

export { PermissionMode };

/** The heartbeat timeout of model and tool activities when a session sets none (`heartbeatTimeoutMs`). */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 3_000;

const RetryOptions = sharedSchema('config.RetryOptions', () =>
  z
    .object({
      maxAttempts: z.number().int().min(1).max(100).default(5),
      initialIntervalMs: z.number().int().min(1).default(1_000),
      maximumIntervalMs: z.number().int().min(1).default(60_000),
    })
    .strict(),
);
type RetryOptions = z.infer<typeof RetryOptions>;

const SystemPromptOption = sharedSchema('config.SystemPromptOption', () =>
  z.union([z.string(), z.object({ type: z.literal('preset'), preset: z.string().optional(), append: z.string().optional() }).strict()]),
);

/** Claude Agent SDK `AgentDefinition`: a subagent the `Task` tool can start (ARCHITECTURE.md#subagents). */
export const AgentDefinition = sharedSchema('config.AgentDefinition', () =>
  z
    .object({
      description: z.string().min(1).describe('When to use this agent: shown to the model in the Task tool.'),
      prompt: z.string().min(1).describe("The agent's system prompt."),
      tools: z.array(z.string().min(1)).optional(),
      /** A model name, or 'inherit' (the parent's current model; also when absent). */
      model: z.string().min(1).optional(),
    })
    .strict(),
);
export type AgentDefinition = z.infer<typeof AgentDefinition>;

/** Set by the parent on a subagent's options; never by users. */
const SubagentLink = sharedSchema('config.SubagentLink', () =>
  z
    .object({
      parentSessionId: z.string().min(1),
      parentToolUseId: z.string().min(1),
      agentType: z.string().min(1),
      depth: z.number().int().positive(),
    })
    .strict(),
);
type SubagentLink = z.infer<typeof SubagentLink>;

/**
 * What a user sets: the session options (`SessionOptions`), without the rules that tie them
 * together (`SessionConfig`) and without the start flags below.
 */
export const SessionUserOptions = sharedSchema('config.SessionUserOptions', () =>
  z
    .object({
      prompt: z.string().min(1).describe('The first user message.'),
      model: z.string().min(1).default('gpt-4.1-mini'),
      fallbackModel: z.string().min(1).optional(),
      systemPrompt: SystemPromptOption.optional(),
      maxTurns: z.number().int().positive().optional(),
      /** Interactive sessions: answer at most this many user inputs (rounds); the next ends the session. */
      maxRounds: z.number().int().positive().optional(),
      maxBudgetUsd: z.number().positive().optional(),
      maxThinkingTokens: z.number().int().nonnegative().optional(),
      maxOutputTokens: z.number().int().positive().default(16_384),
      tools: z.array(z.string()).optional(),
      allowedTools: PermissionRuleList.default([]),
      disallowedTools: PermissionRuleList.default([]),
      /** Rules that always ask a person (Claude Code's settings `ask` list). */
      askTools: PermissionRuleList.default([]),
      /**
       * The folder the tools work in. With `workspace` it is not given: it is the workspace's folder
       * once the tools host has made it, and empty until then (ARCHITECTURE.md#workspaces).
       */
      // '' is the parsed form of "not given" (a workspace's, before it is made): parsing a parsed config again accepts it.
      cwd: z
        .string()
        .refine((v) => v === '' || v.startsWith('/'), { message: 'must be an absolute path' })
        .optional(),
      /** A folder made for this session on a tools host: a clone at a ref, or a copy (ARCHITECTURE.md#workspaces). */
      workspace: WorkspaceOption.optional(),
      /** A command run in the workspace after the agent ends; its exit code gives the result's `verdict`. */
      verify: VerifyOption.optional(),
      additionalDirectories: z.array(z.string().startsWith('/', { message: 'must be an absolute path' })).default([]),
      permissionMode: PermissionMode.default('default'),
      env: z.record(z.string(), z.string()).default({}),
      /**
       * How Bash runs (docs/ARCHITECTURE.md#bash-sandbox): 'auto', 'required', 'off' or Claude Code's
       * settings object. Absent: the tools worker's default (DURABLE_AGENT_SANDBOX, else 'auto').
       */
      sandbox: SandboxOption.optional(),
      includePartialMessages: z.boolean().default(false),
      interactive: z.boolean().default(false),
      requireDoneTool: z.boolean().default(false),
      /**
       * Structured output (ARCHITECTURE.md#structured-output): the final reply is JSON matching
       * `schema`, sent to the provider as `response_format` and checked on the model worker.
       */
      outputFormat: z
        .object({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) })
        .strict()
        .optional(),
      retry: RetryOptions.prefault({}),
      /** Heartbeat timeout of model and tool activities (ms): how fast a dead worker is noticed. */
      heartbeatTimeoutMs: z.number().int().min(1_000).default(DEFAULT_HEARTBEAT_TIMEOUT_MS),
      /** Interactive sessions wait this long for the next message before closing (ms). */
      idleTimeoutMs: z
        .number()
        .int()
        .positive()
        .default(24 * 3_600_000),
      /** How long a tool call waits for a person's answer before it is denied; default: no limit. */
      permissionTimeoutMs: z.number().int().positive().optional(),
      /** Command hooks, shaped like Claude Code's settings `hooks` (ARCHITECTURE.md#hooks). */
      hooks: HooksSettings.default({}),
      /**
       * Callback hooks held by the client that started the session (`query()`'s function hooks):
       * per event, each matcher, its timeout and how many callbacks it has — never a function. The
       * session asks that client (`system/hook_request`) and waits for its `respondToHook` answer
       * (ARCHITECTURE.md#callback-hooks).
       */
      clientHooks: ClientHooks.optional(),
      /**
       * Tools of in-process MCP servers (`createSdkMcpServer`) served by the client that started the
       * session with `query()`: each tool's server, name, description and input schema — never code.
       * Offered as `mcp__<server>__<tool>`; a call asks that client (`system/tool_request`) and waits
       * for its `respondToTool` answer (ARCHITECTURE.md#client-mcp-tools).
       */
      clientTools: ClientTools.optional(),
      /** How long a call of a client tool waits for the client's answer before it is an error result (ms; default 60 s). */
      clientToolTimeoutMs: z.number().int().positive().optional(),
      /** Settings files read on the tools worker: user (~/.claude/settings.json), project and local (<cwd>/.claude/…). */
      settingSources: z.array(z.enum(['user', 'project', 'local'])).default([]),
      /** A settings file on the tools worker (`--settings FILE`), above the sources above. */
      settingsFile: z.string().startsWith('/', { message: 'must be an absolute path' }).optional(),
      /** How many times in a row a Stop hook may keep a turn going (`decision: 'block'`). */
      maxStopHookContinuations: z.number().int().min(0).default(3),
      /** At maxTurns, make one last call without tools for a summary of where things stand. */
      finalSummary: z.boolean().default(false),
      /**
       * Record the workspace as a git commit on the tools host after every turn whose tools may have
       * changed it, and push it to the checkpoint remote (ARCHITECTURE.md#checkpoints). Default: on
       * for a session with a `workspace`, off for a plain `cwd` (its first checkpoint hashes the
       * whole folder, which may be a home directory).
       */
      // No default in the schema: a config without it (from an earlier client, or a recorded history)
      // decides by a patch marker; clients write `true` (startConfig), so new sessions need none.
      checkpoints: z.boolean().optional(),
      /**
       * How long an activity on the session's pinned tools host may wait to be picked up before the
       * host counts as lost (when no worker polls its queue either) and the workspace is restored
       * elsewhere from its last checkpoint.
       */
      workspaceHostTimeoutMs: z
        .number()
        .int()
        .min(1_000)
        .default(2 * 60_000),
      /** Continue-as-new after this many model turns in one run (also when Temporal suggests it). */
      continueAsNewEveryTurns: z.number().int().positive().optional(),
      /** Keep the AgentStatus/AgentModel/AgentTurns/AgentCostUsd/AgentBatchId search attributes current. */
      searchAttributes: z.boolean().default(true),
      loopDetection: z
        .object({
          enabled: z.boolean().default(true),
          threshold: z.number().int().min(2).default(3),
          window: z.number().int().min(2).default(10),
        })
        .strict()
        .prefault({}),
      compaction: CompactionConfig.prefault({}),
      /** Session id (= workflow id); generated by the client when absent. */
      sessionId: z.string().min(1).optional(),
      /** The platform the system prompt names; recorded once at start by the client (its own), so the workflow's prompt stays deterministic. */
      platform: z.string().default('linux'),
      /**
       * Continue the conversation of this session id: its transcript is loaded before the first turn
       * and `prompt` follows it. Without `forkSession` the new session keeps that id (a new run of the
       * same workflow id, once the old run has closed); with it, the new session has its own id.
       */
      resume: z.string().min(1).optional(),
      forkSession: z.boolean().default(false),
      /**
       * With `resume` and `forkSession`: the transcript ends at the end of this turn, counted from 1
       * across the whole resumed session (`fork --at N`; ARCHITECTURE.md#checkpoints).
       */
      resumeAtTurn: z.number().int().min(0).optional(),
      /**
       * With `resume`: read the settings files anew even if they changed since the resumed session
       * started. Without it, changed files are reported in a `system` warning and the session keeps
       * the settings it started with (ARCHITECTURE.md#hooks).
       */
      reloadSettings: z.boolean().optional(),
      /** MCP servers by name (Claude Code's `.mcp.json` entries: stdio, http, sse), started on the tools worker (ARCHITECTURE.md#mcp). */
      mcpServers: McpServersOption.optional(),
      /** Run this session's tools on a specific queue, e.g. `agent-tools@host` where its workspace lives (ARCHITECTURE.md#tools-pinned-to-their-host). */
      toolsTaskQueue: z.string().min(1).optional(),
      /** Subagents the `Task` tool can start, by name (ARCHITECTURE.md#subagents). */
      agents: z.record(z.string().min(1), AgentDefinition).optional(),
      /** How deep subagents may nest: a Task call past this depth gets an error result. */
      maxSubagentDepth: z.number().int().min(0).default(2),
    })
    .strict(),
);

/**
 * Set by whoever starts the session — the client, a batch job, a parent session — never by users:
 * facts recorded once at start so the workflow stays deterministic, and roll-out flags that tell a
 * new session it may take a newer path its starter knows the workers serve. A batch job's line may
 * not set them (`JobError`). They travel in the same flat start input as the user's options.
 */
export const SessionStartFlags = sharedSchema('config.SessionStartFlags', () =>
  z
    .object({
      /**
       * Set by whoever starts the session (the client, a batch job), never by users: the `env`
       * entries it dropped (ARCHITECTURE.md#secrets-stay-on-workers), names only, for the warning
       * the session shows at start.
       */
      envDropped: z
        .array(z.object({ name: z.string(), reason: z.enum(['credential-name', 'credential-value', 'host']) }).strict())
        .optional(),
      /** When the client started the session (ISO 8601), recorded so the workflow stays deterministic. */
      startedAt: z.string().optional(),
      /** The batch whose job this session is (its search attribute, its spend reports). */
      batchId: z.string().optional(),
      /**
       * Set by whoever starts the session with `startSearchAttributes` (the client, a batch job): the
       * server already holds status `running`, the model and zero turns, so the first reply need not
       * write them again (each write is a history event and a visibility-store write). Sessions
       * started without it write them after their first reply, as they always did.
       */
      searchAttributesAtStart: z.boolean().optional(),
      /**
       * Set by whoever starts the session (`startConfig`: the client, a batch job): the session lists
       * its tools and loads its settings in one step — both activities scheduled together — and
       * records no `settings-and-hooks` patch marker (such a session always loads them). Sessions
       * started without it take the two steps one after the other, as they always did
       * (ARCHITECTURE.md#session-start-in-one-step).
       */
      setupAtOnce: z.boolean().optional(),
      /**
       * Set with `setupAtOnce` by `startConfig`: the two set-up answers come from one activity,
       * `prepareSession`, which the tools worker serves from this version on
       * (ARCHITECTURE.md#session-start-in-one-step). Takes precedence over `setupAtOnce`.
       */
      setupInOneCall: z.boolean().optional(),
      /** Set by the parent session for a subagent it starts with `Task` (ARCHITECTURE.md#subagents). */
      subagent: SubagentLink.optional(),
    })
    .strict(),
);
export type SessionStartFlags = z.infer<typeof SessionStartFlags>;

/** The names of the start flags. */
export const START_FLAGS = Object.keys(SessionStartFlags.shape) as (keyof SessionStartFlags)[];

/** The session's start input: the user's options and the start flags, one flat object. */
export const SessionConfigFields = sharedSchema('config.SessionConfigFields', () =>
  z.object({ ...SessionUserOptions.shape, ...SessionStartFlags.shape }).strict(),
);

export const SessionConfig = sharedSchema('config.SessionConfig', () =>
  SessionConfigFields.superRefine((c, ctx) => {
    const cwd = c.cwd === '' ? undefined : c.cwd;
    if (c.workspace && cwd !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['workspace'],
        message: 'cannot be combined with cwd: the workspace is the folder the session works in',
      });
    }
    if (!c.workspace && cwd === undefined) ctx.addIssue({ code: 'custom', path: ['cwd'], message: 'required (or give a workspace)' });
    if (c.outputFormat && c.requireDoneTool) {
      ctx.addIssue({
        code: 'custom',
        path: ['outputFormat'],
        message: 'cannot be combined with requireDoneTool: the result is either the done tool’s message or the structured output',
      });
    }
    for (const [i, t] of (c.clientTools ?? []).entries()) {
      if (c.mcpServers && Object.hasOwn(c.mcpServers, t.server)) {
        ctx.addIssue({
          code: 'custom',
          path: ['clientTools', i, 'server'],
          message: `${clientToolName(t)}: server ${t.server} is also in mcpServers; give the in-process server another name`,
        });
      }
    }
    if (c.resumeAtTurn !== undefined && !(c.resume && c.forkSession)) {
      ctx.addIssue({
        code: 'custom',
        path: ['resumeAtTurn'],
        message: "goes with resume and forkSession: resuming a session's own folder at an earlier turn would overwrite it",
      });
    }
  }).transform((c) => ({ ...c, cwd: c.cwd ?? '' })),
);
export type SessionConfig = z.infer<typeof SessionConfig>;
export type SessionOptions = z.input<typeof SessionConfig>;

/**
 * The largest prompt (or follow-up message) a client sends, in UTF-8 bytes: the session's start
 * input must stay under the server's 2 MB payload limit with its other options and encoding.
 */
export const MAX_PROMPT_BYTES = 1024 * 1024;

/** Refuse, before anything starts, a prompt over MAX_PROMPT_BYTES, with its size and the limit. */
export function checkPromptSize(prompt: unknown, field = 'prompt'): void {
  if (typeof prompt !== 'string') return;
  // Cheap first: a UTF-8 character is at most 3 bytes per UTF-16 unit.
  if (prompt.length * 3 <= MAX_PROMPT_BYTES) return;
  const bytes = utf8Length(prompt);
  if (bytes <= MAX_PROMPT_BYTES) return;
  throw new ConfigError(
    `${field}: ${bytes} bytes (${(bytes / 1024 / 1024).toFixed(1)} MiB) is over the limit of ${MAX_PROMPT_BYTES} bytes (1 MiB); ` +
      'put large inputs in a file in the workspace and name it in the prompt',
    field,
  );
}

/** Validate session options, naming the first offending field ("maxTurns: expected number…"). */
export function parseSessionConfig(input: unknown): SessionConfig {
  const parsed = SessionConfig.safeParse(input);
  if (parsed.success) {
    // Workflow code runs this too: the frozen rule (src/shared/mcp.ts); clients add refuseMcpSecrets.
    if (parsed.data.mcpServers) refuseMcpSecretsAsRecorded(parsed.data.mcpServers);
    return parsed.data;
  }
  const issue = parsed.error.issues[0]!;
  let path = issue.path.join('.');
  let msg = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    path = [...issue.path, keys[0]].join('.');
    msg = `unknown option${keys.length > 1 ? 's' : ''} ${keys.map((k) => `'${k}'`).join(', ')}`;
  }
  return raise(`invalid session config: ${path || '(root)'}: ${msg}`, path);
}

function raise(message: string, field: string): never {
  throw new ConfigError(message, field);
}
