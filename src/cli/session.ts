/**
 * The CLI's session commands: run, resume, watch, send, interrupt, set-model, usage, ls, show.
 *
 * Past 300 lines: one file per CLI area; the session commands share their argument parsing and
 * rendering of a session's stream.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { AgentDefinition, checkPromptSize, type PermissionMode, type SessionOptions } from '../shared/config';
import { EXIT, err, list, num, out, parse, printJson, printTable, readStdin, usd, UsageError, withClient } from './args';
import type { DurableAgentClient, SessionHandle } from '../client/client';
import { renderSummary, renderTranscript, visible } from './render';
import { checkSettingsFiles, parseSettingSources } from './settings-check';
import { isLocalGitPath } from '../client/jobs-file';
import { startConfigOf } from './session-info';
import { LiveText } from './render-live';
import { parseMcpConfigFile } from '../shared/mcp';
import { WorkspaceOption } from '../shared/workspace';
import { forkAtOptions, forkPoint, renderCheckpoints } from '../client/checkpoints';

const SESSION_FLAGS = {
  model: { type: 'string' },
  cwd: { type: 'string' },
  repo: { type: 'string' },
  'workspace-from': { type: 'string' },
  verify: { type: 'string' },
  'max-turns': { type: 'string' },
  'max-budget-usd': { type: 'string' },
  'permission-mode': { type: 'string' },
  'allowed-tools': { type: 'string' },
  'disallowed-tools': { type: 'string' },
  sandbox: { type: 'string' },
  'ask-tools': { type: 'string' },
  settings: { type: 'string' },
  'mcp-config': { type: 'string' },
  'setting-sources': { type: 'string' },
  agents: { type: 'string' },
  interactive: { type: 'boolean' },
  checkpoints: { type: 'boolean' },
  'no-checkpoints': { type: 'boolean' },
  id: { type: 'string' },
  detach: { type: 'boolean' },
  json: { type: 'boolean' },
  'include-partial-messages': { type: 'boolean' },
} as const;

const FLAGS_USAGE = `  [--model M] [--cwd DIR | --repo URL[#REF] | --workspace-from DIR] [--verify CMD]
  [--max-turns N] [--max-budget-usd X] [--interactive]
  [--permission-mode default|acceptEdits|bypassPermissions|plan|dontAsk] [--allowed-tools A,B]
  [--disallowed-tools A,B] [--ask-tools A,B] [--settings FILE] [--setting-sources user,project,local]
  [--sandbox auto|required|off|JSON] [--agents JSON] [--mcp-config FILE] [--checkpoints | --no-checkpoints]
  [--id ID] [--detach] [--json [--include-partial-messages]]
  Rules use Claude Code's syntax: Bash, Bash(npm test), Bash(git push:*), Edit(src/**), mcp__server.
  --settings FILE and --setting-sources read Claude Code settings files (permissions, hooks) on the
  tools worker: user = its ~/.claude/settings.json, project/local = <cwd>/.claude/settings{,.local}.json.
  --agents '{"name":{"description":…,"prompt":…,"tools":[…],"model":…}}' defines subagents the
  Task tool starts (each a child workflow of the session, listed by durable-agent show).
  --mcp-config FILE: MCP servers in Claude Code's .mcp.json format ({"mcpServers": {...}}), started
  on the tools worker; credentials (headers, URL query, args, env) as \${VAR}, set on the worker.
  --repo URL[#REF]: the session works in a fresh clone of URL (a git URL, or a path on the tools
  host) at REF (branch, tag or commit; default the remote's HEAD), made on a tools host;
  --workspace-from DIR: in a copy of DIR there. Either replaces --cwd. --verify CMD runs in that
  folder when the agent ends; its exit code is the session's verdict (durable-agent info ID).
  With --repo or --workspace-from, the folder is checkpointed on the tools host after every turn
  that may change files (pushed to DURABLE_AGENT_CHECKPOINT_REMOTE when set there): durable-agent
  fork ID --at N, diff --from/--to; --no-checkpoints turns that off. A plain --cwd folder is
  checkpointed only with --checkpoints (the first checkpoint hashes the whole folder).
  A tool call that asks waits for: durable-agent approve|deny ID.`;

const RUN_USAGE = `usage: durable-agent run [prompt]
${FLAGS_USAGE}
  The prompt is read from stdin when not given and stdin is not a terminal.
  --detach prints the session id and returns; --json prints one SDK message per line
  (with --include-partial-messages, the replies' stream_event messages too). Replies print as
  the model writes them.
  Attached, Ctrl-C interrupts the current turn (then: detach, end, or keep watching).`;

const RESUME_USAGE = `usage: durable-agent resume ID [prompt] [--fork [--at N]] [--reload-settings]
${FLAGS_USAGE}
  Continues session ID's conversation with a new prompt (default: "${'Continue where you left off.'}").
  Without --fork the session keeps its id (ID must have ended); with --fork it gets a new one.
  --fork --at N: the new session starts from turn N (counted from 1 across ID's resumes): its
  transcript up to the end of that turn, its files from the checkpoint at or before it (as
  durable-agent fork ID --at N).
  Settings files that changed since the session started are reported (on stderr) and not applied:
  the model may have written them. --reload-settings reads them anew.`;

const FORK_USAGE = `usage: durable-agent fork ID --at N [prompt] [--id NEW]
${FLAGS_USAGE}
  A new session from session ID as it was at the end of turn N (counted from 1 across ID's
  resumes; 0 = before the first): ID's transcript up to that turn, and its folder as the checkpoint
  at or before that turn recorded it, restored on a tools host (the new session's cwd: durable-agent
  info NEW). durable-agent show ID lists the checkpoints. The same as resume ID --fork --at N; ID
  is left as it was. The prompt defaults to "${'Continue where you left off.'}".`;

type SessionFlags = ReturnType<typeof parse<typeof SESSION_FLAGS>>['values'];

function sessionOptions(v: SessionFlags): Partial<SessionOptions> {
  return {
    ...(v.cwd ? { cwd: path.resolve(v.cwd) } : {}),
    ...workspaceFlags(v),
    ...(v.model ? { model: v.model } : {}),
    ...(v['max-turns'] !== undefined ? { maxTurns: num(v['max-turns'], 'max-turns', { integer: true, min: 1 }) } : {}),
    ...(v['max-budget-usd'] !== undefined ? { maxBudgetUsd: num(v['max-budget-usd'], 'max-budget-usd') } : {}),
    ...(v['permission-mode'] ? { permissionMode: v['permission-mode'] as PermissionMode } : {}),
    ...(v['allowed-tools'] ? { allowedTools: list(v['allowed-tools']) } : {}),
    ...(v['disallowed-tools'] ? { disallowedTools: list(v['disallowed-tools']) } : {}),
    ...(v.sandbox ? { sandbox: sandboxFlag(v.sandbox) } : {}),
    ...(v['ask-tools'] ? { askTools: list(v['ask-tools']) } : {}),
    ...(v.settings !== undefined ? { settingsFile: path.resolve(v.settings) } : {}),
    ...(v['setting-sources'] !== undefined ? { settingSources: parseSettingSources(v['setting-sources']) } : {}),
    ...(v.agents !== undefined ? { agents: agentsFlag(v.agents) } : {}),
    ...(v['mcp-config'] !== undefined ? { mcpServers: mcpConfigFlag(v['mcp-config']) } : {}),
    ...(v.interactive ? { interactive: true } : {}),
    ...checkpointsFlag(v),
    ...(v.id ? { sessionId: v.id } : {}),
  };
}

function checkpointsFlag(v: { checkpoints?: boolean; 'no-checkpoints'?: boolean }): Pick<SessionOptions, 'checkpoints'> {
  if (v.checkpoints && v['no-checkpoints']) throw new UsageError('--checkpoints and --no-checkpoints cannot be combined');
  return v.checkpoints ? { checkpoints: true } : v['no-checkpoints'] ? { checkpoints: false } : {};
}

/**
 * `--repo URL[#REF]` → `workspace: {git, ref}`; `--workspace-from DIR` → `workspace: {copy}` (DIR
 * made absolute, as is a repository given as a relative path); `--verify CMD`. A workspace is the
 * session's folder (ARCHITECTURE.md#workspaces), so `--cwd` beside one is refused by name.
 */
export function workspaceFlags(
  v: { cwd?: string; repo?: string; 'workspace-from'?: string; verify?: string },
  here: string = process.cwd(),
): Pick<SessionOptions, 'workspace' | 'verify'> {
  const given = (['repo', 'workspace-from'] as const).filter((f) => v[f] !== undefined);
  if (given.length === 2) throw new UsageError('--repo and --workspace-from cannot be combined: give one workspace');
  if (given.length && v.cwd !== undefined) {
    throw new UsageError(`--cwd cannot be combined with --${given[0]}: the workspace is the folder the session works in`);
  }
  let workspace: SessionOptions['workspace'];
  if (v.repo !== undefined) {
    const hash = v.repo.lastIndexOf('#');
    const url = hash < 0 ? v.repo : v.repo.slice(0, hash);
    const ref = hash < 0 ? undefined : v.repo.slice(hash + 1);
    if (!url) throw new UsageError(`--repo: expected URL[#REF], got '${v.repo}'`);
    if (ref === '') throw new UsageError(`--repo: nothing after '#' in '${v.repo}' (leave out '#' for the remote's HEAD)`);
    workspace = { git: isLocalGitPath(url) ? path.resolve(here, url) : url, ...(ref !== undefined ? { ref } : {}) };
  } else if (v['workspace-from'] !== undefined) {
    if (!v['workspace-from']) throw new UsageError('--workspace-from: expected a folder');
    workspace = { copy: path.resolve(here, v['workspace-from']) };
  }
  // Checked here, before connecting, so the flag is named: `--repo: ref: not a valid git ref`.
  const checked = workspace && WorkspaceOption.safeParse(workspace);
  if (checked && !checked.success) {
    const issue = checked.error.issues[0]!;
    throw new UsageError(`--${given[0]}: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  if (v.verify !== undefined && !v.verify.trim()) throw new UsageError('--verify: expected a command');
  return { ...(workspace ? { workspace } : {}), ...(v.verify !== undefined ? { verify: v.verify } : {}) };
}

/** `--mcp-config FILE` (Claude Code's `.mcp.json`); a bad file is a ConfigError naming the field (exit 2). */
function mcpConfigFlag(file: string): SessionOptions['mcpServers'] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--mcp-config: cannot read ${file}: ${(e as Error).message}`);
  }
  return parseMcpConfigFile(text, `--mcp-config ${file}`);
}

/** A mode, or Claude Code-style settings as JSON (`{"network":"off"}`); the session config validates either. */
function sandboxFlag(value: string): SessionOptions['sandbox'] {
  if (!value.trim().startsWith('{')) return value as SessionOptions['sandbox'];
  try {
    return JSON.parse(value) as SessionOptions['sandbox'];
  } catch (e) {
    throw new UsageError(`--sandbox: not valid JSON: ${(e as Error).message}`);
  }
}

/** `--agents JSON` (like `claude --agents`): checked here, so a bad definition exits 2 naming its field. */
function agentsFlag(value: string): SessionOptions['agents'] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (e) {
    throw new UsageError(`--agents: not valid JSON: ${(e as Error).message}`);
  }
  const checked = z.record(z.string().min(1), AgentDefinition).safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const keys = issue.code === 'unrecognized_keys' ? ` '${(issue as { keys: string[] }).keys.join("', '")}'` : '';
    throw new UsageError(`--agents: ${issue.path.join('.') || '(root)'}: ${issue.message}${keys}`);
  }
  return checked.data;
}

export async function runCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, SESSION_FLAGS, RUN_USAGE);
  if (v.help) return (out(RUN_USAGE), EXIT.ok);
  let prompt = positionals.join(' ').trim();
  if (!prompt && !process.stdin.isTTY) prompt = (await readStdin()).trim();
  if (!prompt) throw new UsageError(`a prompt is required\n\n${RUN_USAGE}`);
  const given = sessionOptions(v);
  // With a workspace there is no default folder: it is made on the tools host.
  const options = { ...(given.workspace ? {} : { cwd: process.cwd() }), ...given, prompt } as SessionOptions;
  // Before connecting: bad input exits 2 with nothing started, whether or not Temporal answers.
  checkStartInput(options);
  return withClient(async (client) => startAndAttach(client, options, v));
}

const RESUME_FLAGS = {
  ...SESSION_FLAGS,
  fork: { type: 'boolean' },
  at: { type: 'string' },
  'reload-settings': { type: 'boolean' },
} as const;

export function resumeCommand(argv: string[]): Promise<number> {
  return resumeOrFork(argv, RESUME_USAGE);
}

/** `fork ID --at N …` is `resume ID --fork --at N …`. */
export async function forkCommand(argv: string[]): Promise<number> {
  const { values: v } = parse(argv, RESUME_FLAGS, FORK_USAGE);
  if (v.help) return (out(FORK_USAGE), EXIT.ok);
  if (v.at === undefined)
    throw new UsageError(`--at N is required (durable-agent resume ID --fork continues from the end)\n\n${FORK_USAGE}`);
  return resumeOrFork(['--fork', ...argv], FORK_USAGE);
}

/**
 * `resume ID --at N` and `fork ID --at N` checks made before connecting: a fork only (resuming a
 * session's own folder at an earlier turn would overwrite it), in a folder restored from the
 * checkpoint (so no --cwd).
 */
export function checkForkAt(id: string, v: { fork?: boolean; at?: string; cwd?: string }): void {
  if (v.at === undefined) return;
  if (!v.fork) throw new UsageError(`--at goes with --fork: resuming ${id}'s own folder at an earlier turn would overwrite it`);
  if (v.cwd !== undefined) {
    throw new UsageError(
      `--cwd cannot be combined with --at: the fork works in a copy of ${id}'s folder at that turn, made on a tools host`,
    );
  }
}

async function resumeOrFork(argv: string[], usage: string): Promise<number> {
  const { values: v, positionals } = parse(argv, RESUME_FLAGS, usage);
  if (v.help) return (out(usage), EXIT.ok);
  const [id, ...words] = positionals;
  if (!id) throw new UsageError(`a session id is required\n\n${usage}`);
  if (!v.fork && v.id) throw new UsageError(`--id needs --fork (without it the session keeps its id)\n\n${usage}`);
  if (v.repo !== undefined || v['workspace-from'] !== undefined) {
    throw new UsageError(`--${v.repo !== undefined ? 'repo' : 'workspace-from'}: a resumed session works where its conversation began`);
  }
  checkForkAt(id, v);
  const prompt = words.join(' ').trim() || 'Continue where you left off.';
  checkPromptSize(prompt);
  return withClient(async (client) => {
    const old = await client.get(id);
    const d = await old.workflow.describe();
    if (!v.fork && d.status.name === 'RUNNING') {
      throw new UsageError(`session ${id} is still running: send it a message (durable-agent send) or resume it with --fork`);
    }
    const base = await startConfigOf(client.client, id);
    // reloadSettings is this resume's choice alone: never inherited from the run resumed; nor is
    // the turn the resumed session was itself forked at.
    const {
      sessionId: _s,
      startedAt: _t,
      resume: _r,
      forkSession: _f,
      batchId: _b,
      reloadSettings: _l,
      resumeAtTurn: _a,
      ...inherited
    } = base;
    // Callback hooks are answered by the program that declared them (ARCHITECTURE.md#callback-hooks): nobody here would.
    if (inherited.clientHooks) {
      throw new UsageError(
        `session ${id} has callback hooks (clientHooks: ${Object.keys(inherited.clientHooks).join(', ')}), which only the program ` +
          `that started it with query() can answer; the CLI cannot. Resume it from that program: query({ prompt, options: { resume: '${id}', hooks } })`,
      );
    }
    // Likewise the tools of in-process MCP servers (ARCHITECTURE.md#client-mcp-tools).
    if (inherited.clientTools) {
      const servers = [...new Set(inherited.clientTools.map((t) => t.server))];
      throw new UsageError(
        `session ${id} has tools of in-process MCP servers (clientTools: ${servers.join(', ')}), which only the program ` +
          `that started it with query() can run; the CLI cannot. Resume it from that program: query({ prompt, options: { resume: '${id}', mcpServers } })`,
      );
    }
    let kept: Partial<SessionOptions> = inherited;
    let at: Partial<SessionOptions> = {};
    if (v.at !== undefined) {
      const point = forkPoint(await old.checkpoints(), id, `--at ${v.at}`, v.at);
      // The fork's folder is the checkpoint's, restored on a tools host: not ID's cwd or workspace.
      const { cwd: _c, workspace: _w, ...rest } = inherited;
      kept = rest;
      at = forkAtOptions(id, point);
      const c = point.checkpoint;
      err(`forking ${id} at turn ${point.turn}: files from the checkpoint of turn ${c.turn} (${c.commit.slice(0, 12)})`);
    }
    const options = {
      ...kept,
      ...sessionOptions(v),
      prompt,
      resume: id,
      forkSession: Boolean(v.fork),
      ...at,
      ...(v['reload-settings'] ? { reloadSettings: true } : {}),
    } as SessionOptions;
    return startAndAttach(client, options, v);
  });
}

async function startAndAttach(
  client: DurableAgentClient,
  options: SessionOptions,
  v: { detach?: boolean; json?: boolean; 'include-partial-messages'?: boolean },
): Promise<number> {
  if (v['include-partial-messages'] && !v.json) {
    throw new UsageError('--include-partial-messages goes with --json (without it, replies print as they stream anyway)');
  }
  checkStartInput(options);
  // A workspace's folder is made on the tools host: its settings files are read there.
  if (options.cwd !== undefined)
    checkSettingsFiles({ cwd: options.cwd, settingSources: options.settingSources, settingsFile: options.settingsFile });
  const session = await client.start(options);
  for (const w of session.warnings) err(`warning: ${visible(w)}`);
  if (v.detach) return (out(session.sessionId), EXIT.ok);
  if (!v.json) err(`session ${session.sessionId} (Ctrl-C interrupts the turn)`);
  return attach(session, { json: Boolean(v.json), partial: Boolean(v['include-partial-messages']) });
}

/**
 * The prompt's size, and the folder: without `toolsTaskQueue` the session's tools run where this
 * CLI can see the folder, so a missing one is refused here; with it the tools host checks it and
 * the session ends at once with an error result naming it.
 */
function checkStartInput(options: SessionOptions): void {
  checkPromptSize(options.prompt);
  if (options.toolsTaskQueue || options.cwd === undefined) return;
  let problem: string | undefined;
  try {
    if (!statSync(options.cwd).isDirectory()) problem = 'is not a directory';
  } catch (e) {
    problem = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as NodeJS.ErrnoException).code})`;
  }
  if (problem) throw new UsageError(`--cwd: ${options.cwd} ${problem}`);
}

/**
 * Stream a session to the terminal until its result. Ctrl-C interrupts the current turn; on a
 * terminal it then asks whether to detach, end the session, or keep watching; without one, a
 * second Ctrl-C detaches. Detaching leaves the session running (exit 0).
 */
async function attach(session: SessionHandle, opts: { json: boolean; partial?: boolean; after?: number }): Promise<number> {
  const color = Boolean(process.stdout.isTTY) && !opts.json;
  let detach!: () => void;
  const detached = new Promise<'detached'>((resolve) => (detach = () => resolve('detached')));
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) return detach();
    session.interrupt().catch((e) => err(`interrupt failed: ${(e as Error).message}`));
    if (!process.stdin.isTTY) return err('\ninterrupting the current turn… (Ctrl-C again to detach)');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    rl.on('SIGINT', () => (rl.close(), detach()));
    rl.question('\ninterrupted the current turn: [d]etach, [e]nd the session, or Enter to keep watching? ', (a) => {
      rl.close();
      interrupts = 0;
      if (/^d/i.test(a.trim())) detach();
      else if (/^e/i.test(a.trim())) session.cancel().catch((e) => err(`cancel failed: ${(e as Error).message}`));
    });
  };
  process.on('SIGINT', onSigint);
  // Replies print as they stream (ARCHITECTURE.md#live-tokens); JSON carries stream events only when asked.
  const live = opts.json ? undefined : new LiveText({ color });
  let liveFailed = false;
  const it = session
    .messages({
      after: opts.after,
      includePartialMessages: !opts.json || Boolean(opts.partial),
      onLiveError: (e) => {
        if (!liveFailed && !opts.json) err(`(live tokens unavailable: ${e.message}; replies print once complete)`);
        liveFailed = true;
      },
    })
    [Symbol.asyncIterator]();
  let code: number = EXIT.error;
  try {
    for (;;) {
      const next = await Promise.race([it.next(), detached]);
      if (next === 'detached') {
        err(`detached; session ${session.sessionId} goes on (durable-agent watch ${session.sessionId})`);
        return EXIT.ok;
      }
      if (next.done) break;
      const m = next.value;
      if (opts.json || !live) printJson(m);
      else if (m.type === 'stream_event') process.stdout.write(live.write(m.event));
      else {
        process.stdout.write(live.breakLine());
        // Warnings (settings files not applied, a sandbox that is off, …) are diagnostics: stderr.
        const print = m.type === 'system' && m.subtype === 'warning' ? err : out;
        for (const line of live.lines(m)) print(line);
      }
      if (m.type === 'result') code = m.is_error ? EXIT.error : EXIT.ok;
    }
    if (code === EXIT.error && !opts.json) err(`session ${session.sessionId} ended without a successful result`);
    return code;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

const ID_USAGE = {
  watch: 'usage: durable-agent watch ID [--json [--include-partial-messages]] [--after SEQ]',
  send: 'usage: durable-agent send ID TEXT [--id MESSAGE_ID] [--steer]   (--steer: reach the running turn before its next model call)',
  interrupt: 'usage: durable-agent interrupt ID',
  'set-model': 'usage: durable-agent set-model ID MODEL',
  'set-permission-mode': 'usage: durable-agent set-permission-mode ID default|acceptEdits|bypassPermissions|plan|dontAsk',
  usage: 'usage: durable-agent usage ID [--json]',
  show: 'usage: durable-agent show ID [--json]   (the transcript, then the checkpoints by turn; --json: the transcript only)',
  cancel: 'usage: durable-agent cancel ID   (a session or a batch)',
} as const;

/** Commands that take a session id (and maybe one more argument). */
export async function idCommand(command: keyof typeof ID_USAGE, argv: string[]): Promise<number> {
  const usage = ID_USAGE[command];
  const { values: v, positionals } = parse(
    argv,
    {
      json: { type: 'boolean' },
      after: { type: 'string' },
      id: { type: 'string' },
      steer: { type: 'boolean' },
      'include-partial-messages': { type: 'boolean' },
    },
    usage,
  );
  if (v.help) return (out(usage), EXIT.ok);
  const [id, ...rest] = positionals;
  const arg = rest.join(' ').trim();
  const needsArg = command === 'send' || command === 'set-model' || command === 'set-permission-mode';
  if (!id || (needsArg && !arg) || (!needsArg && rest.length > 0)) throw new UsageError(usage);
  if ((v.after !== undefined && command !== 'watch') || ((v.id !== undefined || v.steer) && command !== 'send'))
    throw new UsageError(usage);
  if (v['include-partial-messages'] && (command !== 'watch' || !v.json)) throw new UsageError(usage);
  return withClient(async (c) => {
    if (command === 'cancel') {
      await c.client.workflow.getHandle(id).cancel();
      err(`cancellation requested for ${id}`);
      return EXIT.ok;
    }
    const s = await c.get(id);
    switch (command) {
      case 'watch':
        return attach(s, {
          json: Boolean(v.json),
          partial: Boolean(v['include-partial-messages']),
          after: num(v.after, 'after', { integer: true, min: -1 }),
        });
      case 'send': {
        const r = await s.send(arg, { ...(v.id ? { id: v.id } : {}), ...(v.steer ? { steer: true } : {}) });
        out(r.duplicate ? `${r.turnId} (duplicate: already received)` : r.turnId);
        return EXIT.ok;
      }
      case 'interrupt':
        return (await s.interrupt(), EXIT.ok);
      case 'set-model':
        return (await s.setModel(arg), EXIT.ok);
      case 'set-permission-mode':
        return (await s.setPermissionMode(arg as PermissionMode), EXIT.ok);
      case 'usage':
        return printUsage(s, Boolean(v.json));
      case 'show':
        return show(s, Boolean(v.json));
    }
  });
}

async function printUsage(s: SessionHandle, json: boolean): Promise<number> {
  const u = await s.usage();
  if (json) return (printJson(u), EXIT.ok);
  out(`tokens: in ${u.inputTokens} (cached ${u.cacheReadInputTokens}) · out ${u.outputTokens} · cost ${usd(u.costUsd)}`);
  for (const [model, m] of Object.entries(u.perModel)) {
    out(`  ${model}: in ${m.inputTokens} · out ${m.outputTokens} · ${m.costBasis === 'unknown' ? 'no price known' : usd(m.costUsd)}`);
    // Attempts the server gave up on while they ran: billed, in the total, not in the line above (ARCHITECTURE.md#abandoned-attempts).
    const a = m.abandonedCalls;
    if (a?.count) {
      out(
        `    abandoned attempts: ${a.count} · in ${a.inputTokens + a.cacheReadInputTokens} · out ${a.outputTokens} · ${usd(a.costUSD)}` +
          (a.estimated ? ` (${a.estimated} estimated)` : ''),
      );
    }
  }
  return EXIT.ok;
}

async function show(s: SessionHandle, json: boolean): Promise<number> {
  const transcript = await s.transcript();
  if (json) {
    for (const m of transcript) printJson(m);
    return EXIT.ok;
  }
  const color = Boolean(process.stdout.isTTY);
  for (const line of renderTranscript(transcript, { color })) out(line);
  // Subagents are sessions of their own: `durable-agent show <their id>` shows each one's transcript.
  for (const a of (await s.state()).subagents ?? []) {
    out(visible(`subagent ${a.agentType} (${a.status}, ${usd(a.costUsd)}) for ${a.toolUseId} "${a.description}": ${a.workflowId}`));
  }
  // A session from before checkpoints has none to list (null); one that cannot be read does not fail the transcript.
  const checkpoints = await s.checkpoints().catch((e: Error) => (err(`(checkpoints unavailable: ${e.message})`), null));
  for (const line of renderCheckpoints(checkpoints, s.sessionId)) out(visible(line));
  const d = await s.workflow.describe();
  if (d.status.name === 'COMPLETED') for (const line of renderSummary(await s.result(), { color })) out(line);
  else out(`(${d.status.name.toLowerCase().replace(/_/g, ' ')})`);
  return EXIT.ok;
}

const LS_USAGE = `usage: durable-agent ls [--status running|waiting_for_input|waiting_for_approval|completed|failed|…] [--batch ID] [--model M] [--limit N] [--json]`;

export async function lsCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      status: { type: 'string' },
      batch: { type: 'string' },
      model: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    LS_USAGE,
  );
  if (v.help) return (out(LS_USAGE), EXIT.ok);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\n\n${LS_USAGE}`);
  if (v.status && !/^[a-z_]+$/.test(v.status))
    throw new UsageError(`--status: expected a status such as running or completed, got '${v.status}'`);
  const limit = num(v.limit, 'limit', { integer: true, min: 1 }) ?? 50;
  return withClient(async (c) => {
    const rows = [];
    for await (const s of c.list({ status: v.status, batchId: v.batch, model: v.model, limit })) rows.push(s);
    if (v.json) return (rows.forEach(printJson), EXIT.ok);
    // A BUILD column once any session runs on a versioned worker (ARCHITECTURE.md#deploys).
    const builds = rows.some((r) => r.buildId);
    const table = [['ID', 'STATUS', 'MODEL', 'TURNS', 'COST', 'STARTED', ...(builds ? ['BUILD'] : [])]];
    for (const r of rows) {
      const status =
        r.executionStatus === 'RUNNING'
          ? r.status
          : `${r.status}${r.executionStatus === 'COMPLETED' ? '' : ` (${r.executionStatus.toLowerCase()})`}`;
      table.push([
        r.sessionId,
        status,
        r.model ?? '-',
        String(r.turns ?? '-'),
        usd(r.costUsd),
        r.startTime.toISOString().replace('T', ' ').slice(0, 19),
        ...(builds ? [r.buildId ?? '-'] : []),
      ]);
    }
    printTable(table);
    return EXIT.ok;
  });
}
