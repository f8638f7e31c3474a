/**
 * The registry: built-in and user tools by name. `run` is the single entry the `runTool`
 * activity calls; it never rejects for anything the model can fix (ARCHITECTURE.md#tools-fail-as-data): unknown tool,
 * invalid input and tool exceptions all come back as `isError` outcomes.
 */
import { z } from 'zod';
import { capText, MAX_TOOL_RESULT_CHARS, type ToolOutcome, type ToolSpec } from '../../shared/tools';
import { bashTool } from './bash';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { defaultToolOps } from './ops';
import { PathGuardError } from './path-guard';
import { readTool } from './read';
import { errorMessage, toolError, type ToolDefinition, type ToolRegistry } from './types';
import { writeTool } from './write';

export const builtinTools: ToolDefinition[] = [bashTool, readTool, writeTool, editTool, globTool, grepTool];

const CAP_HINT =
  'the tool result is limited; narrow the request (Read with offset/limit, Grep with head_limit or a narrower ' +
  'path, Bash output redirected to a file) to see the rest';

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** Claude Code's wording: "InputValidationError: Read failed due to the following issue: …". */
function formatInputError(toolName: string, error: z.ZodError, input: unknown): string {
  const lines: string[] = [];
  for (const issue of error.issues) {
    const name = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`An unexpected parameter \`${[...issue.path, key].join('.')}\` was provided`);
    } else if (issue.code === 'invalid_type' && name === '') {
      lines.push(`The input is expected as \`${issue.expected}\` but provided as \`${describeType(input)}\``);
    } else if (issue.code === 'invalid_type') {
      const value = valueAt(input, issue.path);
      lines.push(
        value === undefined
          ? `The required parameter \`${name}\` is missing`
          : `The parameter \`${name}\` type is expected as \`${issue.expected}\` but provided as \`${describeType(value)}\``,
      );
    } else {
      lines.push(`The parameter \`${name}\` is invalid: ${issue.message}`);
    }
  }
  return `InputValidationError: ${toolName} failed due to the following issue${lines.length === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}

function toolSpec(tool: ToolDefinition): ToolSpec {
  const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { name: tool.name, description: tool.description, inputSchema, readOnly: tool.readOnly };
}

export function createToolRegistry(extra: ToolDefinition[] = []): ToolRegistry {
  const tools = new Map<string, ToolDefinition>();
  for (const tool of [...builtinTools, ...extra]) {
    if (tools.has(tool.name)) throw new Error(`Duplicate tool name: ${tool.name}`);
    tools.set(tool.name, tool);
  }
  // The tools are fixed here, so their JSON Schemas are built once: converting the zod schemas
  // took ~2 ms of the worker's main thread at every session's start.
  let specs: ToolSpec[] | undefined;
  return {
    specs: () => (specs ??= [...tools.values()].map(toolSpec)).map((spec) => ({ ...spec })),
    has: (name) => tools.has(name),
    async run({ name, input, context }, exec) {
      const tool = tools.get(name);
      if (!tool) {
        return toolError(`No such tool available: ${name}. Available tools: ${[...tools.keys()].join(', ')}`);
      }
      const parsed = tool.schema.safeParse(input);
      if (!parsed.success) return toolError(formatInputError(name, parsed.error, input));
      let outcome: ToolOutcome;
      try {
        const result = await tool.execute(parsed.data, { ...exec, context, ops: exec.ops ?? defaultToolOps() });
        outcome = typeof result === 'string' ? { content: result, isError: false } : result;
      } catch (err) {
        // A path rule found on the file actually opened: the denial, as the tool's own checks word it.
        outcome = toolError(err instanceof PathGuardError ? err.message : `Error: ${errorMessage(err)}`);
      }
      return { ...outcome, content: capText(outcome.content, MAX_TOOL_RESULT_CHARS, CAP_HINT) };
    },
  };
}
