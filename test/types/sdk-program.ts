/**
 * A program written for the Claude Agent SDK, with the SDK's own types: hook callbacks (narrowing
 * on event names, including ones no session fires), `listSessions`, an abort told apart with
 * `AbortError`. `npm run typecheck` compiles it against the SDK as it is;
 * test/types/sdk-conformance.test.ts compiles it again with only its import line changed to
 * this package, and expects no error. Nothing here runs.
 */
import {
  AbortError,
  listSessions,
  query,
  type HookCallback,
  type HookCallbackMatcher,
  type HookInput,
  type HookJSONOutput,
  type Options,
  type PostToolUseHookInput,
  type PreToolUseHookInput,
  type SDKSessionInfo,
  type SyncHookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk';

const guard: HookCallback = async (input, toolUseID, { signal }) => {
  if (signal.aborted || input.hook_event_name !== 'PreToolUse') return { continue: true };
  const pre: PreToolUseHookInput = input;
  const command = (pre.tool_input as { command?: string }).command ?? '';
  if (!command.includes('rm -rf')) return {};
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: `refused ${toolUseID ?? 'a call'}: ${command}`,
    },
  };
};

const seen: string[] = [];
const logger = async (input: HookInput): Promise<HookJSONOutput> => {
  switch (input.hook_event_name) {
    case 'PostToolUse': {
      const post: PostToolUseHookInput = input;
      seen.push(`${post.tool_name} ${JSON.stringify(post.tool_response)} ${post.duration_ms ?? 0}`);
      break;
    }
    case 'Notification':
      seen.push(input.message);
      break;
    case 'SessionStart':
      seen.push(input.source);
      break;
    case 'SubagentStop':
      seen.push(`${input.agent_type} ${input.agent_id}`);
      break;
    case 'StopFailure':
      seen.push(input.error);
      break;
    default:
      seen.push(input.hook_event_name);
  }
  const out: SyncHookJSONOutput = {
    suppressOutput: true,
    hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'logged' },
  };
  return out;
};

const bashGuards: HookCallbackMatcher[] = [{ matcher: 'Bash', hooks: [guard], timeout: 30 }];

export async function recentSessions(dir: string): Promise<string[]> {
  const sessions: SDKSessionInfo[] = await listSessions({ dir, limit: 10, offset: 0 });
  return sessions.map((s) => `${s.sessionId} ${s.summary} ${new Date(s.lastModified).toISOString()} ${s.cwd ?? ''} ${s.createdAt ?? ''}`);
}

export async function run(prompt: string, abortController: AbortController): Promise<string | undefined> {
  const options: Options = {
    cwd: process.cwd(),
    env: { ...process.env, MODE: 'fast' },
    abortController,
    hooks: { PreToolUse: bashGuards, PostToolUse: [{ hooks: [logger] }] },
  };
  try {
    for await (const m of query({ prompt, options })) if (m.type === 'result' && m.subtype === 'success') return m.result;
  } catch (e) {
    if (e instanceof AbortError) return `aborted: ${e.message}`;
    throw e;
  }
  return undefined;
}
