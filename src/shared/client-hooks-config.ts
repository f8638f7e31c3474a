/**
 * The `clientHooks` session option (ARCHITECTURE.md#callback-hooks): the declaration of the
 * callback hooks a client holds — per event, each matcher, its timeout, `onFailure` and how many
 * callbacks — never a function. Apart from src/shared/client-hooks.ts so that the session config
 * can include it without importing the hook runs and requests.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import { knownHookEvent, matcherProblem, type HookEvent } from './permissions/settings';

/** Seconds a matcher's callbacks have when it sets no `timeout`: the SDK's (and Claude Code's) hook default. */
export const CLIENT_HOOK_DEFAULT_TIMEOUT_S = 60;

/** What the session may ask of a client for one event: a guard, a prompt, the events around a session. */
const BLOCK_ON_FAILURE_EVENTS: readonly HookEvent[] = ['PreToolUse', 'UserPromptSubmit'];
/** The SDK ignores `onFailure` on these: a failed Stop hook never keeps a turn going. */
const ON_FAILURE_IGNORED_EVENTS: readonly HookEvent[] = ['Stop', 'SubagentStop'];

export const ClientHookMatcher = sharedSchema('client-hooks.ClientHookMatcher', () =>
  z
    .object({
      matcher: z.string().optional().describe('As in settings files: "*", "" or absent match all; `A|B` exact names; otherwise a regex.'),
      hooks: z.number().int().min(1).max(100).describe('How many callbacks the client holds for this matcher; it calls them in order.'),
      timeout: z.number().positive().optional().describe('Seconds the session waits for the answer (default 60).'),
      onFailure: z.enum(['continue', 'block']).optional(),
    })
    .strict(),
);
export type ClientHookMatcher = z.infer<typeof ClientHookMatcher>;

/** The session option `clientHooks`: set by `query()` from the functions in `options.hooks`. */
export const ClientHooks = sharedSchema('client-hooks.ClientHooks', () =>
  z.record(z.string(), z.array(ClientHookMatcher).min(1)).superRefine((hooks, ctx) => {
    for (const [event, matchers] of Object.entries(hooks)) {
      if (!knownHookEvent(event, ctx)) continue;
      matchers.forEach((m, i) => {
        const problem = matcherProblem(m.matcher);
        if (problem) ctx.addIssue({ code: 'custom', path: [event, i, 'matcher'], message: problem });
        const e = event as HookEvent;
        if (m.onFailure === 'block' && !BLOCK_ON_FAILURE_EVENTS.includes(e) && !ON_FAILURE_IGNORED_EVENTS.includes(e)) {
          ctx.addIssue({
            code: 'custom',
            path: [event, i, 'onFailure'],
            message: `'block' guards nothing on ${event} (it blocks a PreToolUse call or a UserPromptSubmit prompt)`,
          });
        }
      });
    }
  }),
);
export type ClientHooks = Partial<Record<HookEvent, ClientHookMatcher[]>>;
