/**
 * A program written for the Claude Agent SDK, in the shape of its README's examples and typed
 * only with its types: a callback hook, `canUseTool`, a stdio MCP server, partial messages,
 * structured output, and an interrupt. `npm run typecheck` compiles it against the SDK as it is;
 * test/types/sdk-conformance.test.ts compiles it against both SDK versions with only its import
 * line changed to this package, and test/types/sdk-app.test.ts runs that copy against a real
 * worker. It reports what it saw; the test judges.
 */
import {
  query,
  type CanUseTool,
  type HookCallback,
  type Options,
  type PermissionResult,
  type SDKMessage,
} from '@anthropic-ai/claude-agent-sdk';

export interface AppArgs {
  cwd: string;
  /** The stdio MCP server's script (node). */
  mcpServer: string;
  /** The prompt of the research run and of the run that is interrupted. */
  prompt: string;
  interruptPrompt: string;
}

export interface AppReport {
  sessionId: string;
  tools: string[];
  hookDenied: string[];
  asked: string[];
  toolResults: { content: string; isError: boolean }[];
  streamEvents: number;
  streamedText: string;
  repliesText: string;
  result: { subtype: string; structured?: unknown; errors?: string[] } | undefined;
  interrupted: { subtype: string; turns: number } | undefined;
}

const blockRm: (denied: string[]) => HookCallback = (denied) => async (input) => {
  if (input.hook_event_name !== 'PreToolUse') return {};
  const command = (input.tool_input as { command?: string }).command ?? '';
  if (!command.includes('rm -rf')) return {};
  denied.push(command);
  return {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf in this repo' },
  };
};

const reviewer: (asked: string[]) => CanUseTool =
  (asked) =>
  async (toolName, input, { signal }) => {
    asked.push(toolName);
    const answer: PermissionResult =
      signal.aborted || toolName === 'Write'
        ? { behavior: 'deny', message: 'this program only reads' }
        : { behavior: 'allow', updatedInput: input };
    return answer;
  };

const answerSchema = {
  type: 'object',
  properties: { sum: { type: 'number' }, summary: { type: 'string' } },
  required: ['sum', 'summary'],
  additionalProperties: false,
};

function textOf(m: SDKMessage): string {
  if (m.type !== 'assistant') return '';
  return m.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

export async function runApp(args: AppArgs): Promise<AppReport> {
  const report: AppReport = {
    sessionId: '',
    tools: [],
    hookDenied: [],
    asked: [],
    toolResults: [],
    streamEvents: 0,
    streamedText: '',
    repliesText: '',
    result: undefined,
    interrupted: undefined,
  };
  const options: Options = {
    cwd: args.cwd,
    allowedTools: ['Read', 'Glob'],
    maxTurns: 8,
    canUseTool: reviewer(report.asked),
    hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [blockRm(report.hookDenied)] }] },
    mcpServers: { calc: { type: 'stdio', command: 'node', args: [args.mcpServer] } },
    includePartialMessages: true,
    outputFormat: { type: 'json_schema', schema: answerSchema },
  };
  for await (const m of query({ prompt: args.prompt, options })) {
    if (m.type === 'system' && m.subtype === 'init') {
      report.sessionId = m.session_id;
      report.tools = m.tools;
    } else if (m.type === 'stream_event') {
      report.streamEvents++;
      if (m.event.type === 'content_block_delta' && m.event.delta.type === 'text_delta') report.streamedText += m.event.delta.text;
    } else if (m.type === 'assistant') {
      report.repliesText += textOf(m);
    } else if (m.type === 'user' && Array.isArray(m.message.content)) {
      for (const block of m.message.content) {
        if (typeof block === 'object' && block.type === 'tool_result') {
          const content = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
          report.toolResults.push({ content, isError: block.is_error === true });
        }
      }
    } else if (m.type === 'result') {
      report.result =
        m.subtype === 'success' ? { subtype: m.subtype, structured: m.structured_output } : { subtype: m.subtype, errors: m.errors };
    }
  }

  // Interrupt: the turn stops where it stands, and the query ends with its result.
  const q = query({
    prompt: args.interruptPrompt,
    options: { cwd: args.cwd, permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true },
  });
  for await (const m of q) {
    if (m.type === 'tool_progress') await q.interrupt();
    if (m.type === 'result') report.interrupted = { subtype: m.subtype, turns: m.num_turns };
  }
  return report;
}
