/**
 * A command hook's stdout read as a decision. The decision fields themselves (`decisionFields`) are
 * in src/shared/hook-output.ts: the workflow checks a client's callback answers with them too.
 */
import type { HookEvent } from '../../shared/hooks';
import { capText, decisionFields, type Filtered } from '../../shared/hook-output';

export { capText, decisionFields, HOOK_TEXT_MAX_CHARS, type Filtered } from '../../shared/hook-output';

/**
 * A command's stdout on exit 0: JSON when it looks like JSON; plain text is ignored, except for
 * UserPromptSubmit and SessionStart, where Claude Code adds it to the context.
 */
export function commandStdoutDecision(stdout: string, event: HookEvent): Filtered | undefined {
  const trimmed = stdout.trim();
  if (!trimmed) return undefined;
  if (trimmed.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      return { problem: 'invalid JSON on stdout' };
    }
    const filtered = decisionFields(json);
    return 'problem' in filtered ? { problem: `invalid JSON output: ${filtered.problem}` } : filtered;
  }
  if (event === 'UserPromptSubmit' || event === 'SessionStart') {
    return { output: { hookSpecificOutput: { hookEventName: event, additionalContext: capText(trimmed) } } };
  }
  return undefined;
}
