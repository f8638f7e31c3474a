/**
 * A scripted model's script: named scenarios of turns, each turn one assistant reply (text,
 * tool calls, usage) plus the faults to inject on the attempts that ask for it.
 *
 * Scenario files are JSON. A file that does not validate fails loudly, naming the file and the
 * field (`examples/scenarios/x.json: turns.2.tool_calls.0.name: expected string, ...`), because a
 * mistyped script would otherwise show up as a baffling failure far away in a workflow test.
 */
import { readFile } from 'node:fs/promises';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { z } from 'zod';

const count = z.number().int().nonnegative();

const ScriptedToolCall = z
  .object({
    id: z.string().min(1).optional().describe('Tool call id; default `call_<turnIndex>_<i>`, stable across retries.'),
    name: z.string().min(1),
    arguments: z
      .union([z.record(z.string(), z.unknown()), z.string()], {
        error: 'expected an object (sent as JSON) or a string (sent raw, e.g. malformed JSON)',
      })
      .default({}),
  })
  .strict();
type ScriptedToolCall = z.infer<typeof ScriptedToolCall>;

/** Answer the attempt with this HTTP status (default body: an OpenAI-style error object). */
const StatusFault = z
  .object({
    status: z.number().int().min(100).max(599),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional().describe('A string is sent raw; anything else as JSON.'),
  })
  .strict();
/** Send the headers and `n` stream chunks, then cut the connection (non-streaming: cut at once). */
const DropFault = z.object({ drop_after_chunks: count }).strict();
/** Say nothing for `hang_ms` (after `after_chunks` stream chunks, if given), then cut the connection. */
const HangFault = z.object({ hang_ms: count, after_chunks: count.optional() }).strict();

export const Fault = z.union([StatusFault, DropFault, HangFault], {
  error: 'expected {status, headers?, body?} | {drop_after_chunks} | {hang_ms, after_chunks?}',
});
export type Fault = z.infer<typeof Fault>;

const ScriptedUsage = z.object({ prompt_tokens: count, completion_tokens: count, cached_tokens: count.optional() }).strict();
type ScriptedUsage = z.infer<typeof ScriptedUsage>;

export const ScriptedTurn = z
  .object({
    text: z.string().optional(),
    tool_calls: z.array(ScriptedToolCall).optional(),
    finish_reason: z
      .enum(['stop', 'tool_calls', 'length', 'content_filter'])
      .optional()
      .describe('Default: tool_calls if the turn has tool calls, else stop.'),
    usage: ScriptedUsage.optional().describe('Default: derived from lengths (characters / 4).'),
    delay_ms: count.optional().describe('Wait before the first byte of every attempt.'),
    chunk_delay_ms: count.optional().describe('Wait between stream chunks.'),
    faults: z.array(Fault).optional().describe('faults[k] is applied to attempt k+1 of this turn; later attempts are served normally.'),
  })
  .strict();
export type ScriptedTurn = z.infer<typeof ScriptedTurn>;

export const Scenario = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    model: z.string().min(1).optional().describe("The `model` the replies report; default: the request's."),
    turns: z.array(ScriptedTurn).describe('Turn i answers a request holding i assistant messages.'),
  })
  .strict();
export type Scenario = z.infer<typeof Scenario>;
/** What you may write: defaults not yet applied. */
export type ScenarioInput = z.input<typeof Scenario>;
export type TurnInput = z.input<typeof ScriptedTurn>;
export type ToolCallInput = z.input<typeof ScriptedToolCall>;

export interface ParseScenarioOptions {
  /** Named in error messages (a file path); default `scenario '<name>'`. */
  source?: string;
  /** Values for `${NAME}` placeholders in string values. */
  vars?: Record<string, string>;
}

/** Scenarios whose placeholders are already substituted, so they are never substituted twice. */
const prepared = new WeakSet<Scenario>();

/** Whether `s` came out of parseScenario/loadScenarioFile (validated, vars applied). */
export function isPreparedScenario(s: unknown): s is Scenario {
  return typeof s === 'object' && s !== null && prepared.has(s as Scenario);
}

/**
 * Validate a scenario and substitute `${NAME}` placeholders from `vars` in every string value.
 * An unknown placeholder is an error, not left in place: a literal `${NAME}` that reached the
 * client would make a test fail far from its cause. Write `$${NAME}` for a literal `${NAME}`.
 * Placeholders inside string (raw) tool arguments are substituted as text, without JSON escaping.
 */
export function parseScenario(input: unknown, options: ParseScenarioOptions = {}): Scenario {
  const parsed = Scenario.safeParse(input);
  const named = (input as { name?: unknown } | null)?.name;
  const source = options.source ?? `scenario '${typeof named === 'string' ? named : '?'}'`;
  if (!parsed.success) throw new Error(`${source}: ${describeIssue(parsed.error.issues[0]!)}`);
  const scenario = substituteVars(parsed.data, options.vars ?? {}, [], source) as Scenario;
  prepared.add(scenario);
  return scenario;
}

/** Read, validate and prepare a JSON scenario file; errors name the file and the field. */
export async function loadScenarioFile(path: string, options: { vars?: Record<string, string> } = {}): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`${path}: cannot read scenario file: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path}: invalid JSON: ${(err as Error).message}`);
  }
  return parseScenario(json, { source: path, vars: options.vars });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  let path = issue.path.map(String);
  let message = issue.message.replace(/^Invalid (input|option): /, '');
  if (issue.code === 'unrecognized_keys') {
    path = [...path, issue.keys[0]!];
    message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  }
  return `${path.length ? path.join('.') : '(root)'}: ${message}`;
}

const PLACEHOLDER = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function substituteVars(value: unknown, vars: Record<string, string>, path: (string | number)[], source: string): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (whole, escaped: string, name: string) => {
      if (escaped) return whole.slice(1);
      const v = vars[name];
      if (v === undefined) {
        throw new Error(
          `${source}: ${path.join('.')}: unknown variable \${${name}} (pass it in vars, or --var ${name}=VALUE; write $\${${name}} for a literal)`,
        );
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteVars(v, vars, [...path, i], source));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteVars(v, vars, [...path, k], source)]));
  }
  return value;
}

/** Shorthands for scenarios written in TypeScript tests. */
export const turn = {
  text: (text: string, more: Omit<TurnInput, 'text'> = {}): TurnInput => ({ ...more, text }),
  tools: (calls: ToolCallInput[], more: Omit<TurnInput, 'tool_calls'> = {}): TurnInput => ({ ...more, tool_calls: calls }),
  tool: (name: string, args: ToolCallInput['arguments'] = {}, more: Omit<TurnInput, 'tool_calls'> = {}): TurnInput => ({
    ...more,
    tool_calls: [{ name, arguments: args }],
  }),
};

/** `NAME` from a `[scenario:NAME]` tag in the first user message, if there is one. */
export function scenarioTagIn(body: ChatCompletionCreateParams): string | undefined {
  const first = body.messages.find((m) => m.role === 'user');
  const content: unknown = first?.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map((p: { type?: unknown; text?: unknown }) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : ''))
            .join('\n')
        : '';
  return /\[scenario:([^\]\s]+)\]/.exec(text)?.[1];
}

/** The fault sends part of a streamed reply before it strikes. */
export function hasChunks(fault: Fault): boolean {
  return 'drop_after_chunks' in fault || ('hang_ms' in fault && fault.after_chunks !== undefined);
}
