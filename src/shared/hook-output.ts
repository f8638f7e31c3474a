/**
 * What a hook said, reduced to its decision fields (`HookOutput`). Anything else a command prints
 * or a callback returns stays where it ran (the worker, or the client that called `query()`):
 * only these fields are recorded in history (ARCHITECTURE.md#secrets-stay-on-workers). Problems
 * are described by field, never by quoting the output. Pure: the tools worker filters command and
 * code hook output with it, the client its callbacks' answers, and the workflow's `respondToHook`
 * validator checks them again.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import type { HookOutput } from './hooks';

/** Block reasons (stderr on exit 2), reasons and context each keep at most this many characters. */
export const HOOK_TEXT_MAX_CHARS = 10_000;
/** A decision bigger than this (an `updatedInput` with a whole file, say) is refused: it would go into history. */
const HOOK_OUTPUT_MAX_BYTES = 256 * 1024;

// Non-strict objects: unknown fields (suppressOutput, updatedMCPToolOutput, …) are dropped, not refused.
const HookOutputSchema = sharedSchema('hook-output.HookOutput', () => {
  const text = z.string().transform((s) => capText(s));
  return z.object({
    continue: z.boolean().optional(),
    stopReason: text.optional(),
    decision: z.enum(['block', 'approve']).optional(),
    reason: text.optional(),
    systemMessage: text.optional(),
    hookSpecificOutput: z
      .object({
        hookEventName: z.string().optional(),
        permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
        permissionDecisionReason: text.optional(),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
        additionalContext: text.optional(),
      })
      .optional(),
  });
});

export function capText(s: string, max = HOOK_TEXT_MAX_CHARS): string {
  return s.length > max ? `${s.slice(0, max)}… [${s.length - max} characters cut]` : s;
}

export type Filtered = { output: HookOutput } | { problem: string };

/** Keep the decision fields of a hook's JSON output; a wrong type names the field. */
export function decisionFields(value: unknown): Filtered {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { problem: 'the JSON output is not an object' };
  const parsed = HookOutputSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.') || '(root)';
    return { problem: `\`${field}\`: ${expectation(issue)}` };
  }
  const output = dropUndefined(parsed.data) as HookOutput;
  if (output.hookSpecificOutput && Object.keys(output.hookSpecificOutput).length === 0) delete output.hookSpecificOutput;
  if (JSON.stringify(output).length > HOOK_OUTPUT_MAX_BYTES)
    return { problem: `the decision fields are larger than ${HOOK_OUTPUT_MAX_BYTES / 1024} KiB` };
  return { output };
}

function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return 'invalid value';
  }
}

function dropUndefined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    out[k] = k === 'hookSpecificOutput' && v && typeof v === 'object' ? dropUndefined(v as object) : v;
  }
  return out as T;
}
