import { z } from 'zod';
import { builtinTools, createToolRegistry, type ToolDefinition } from '../../src/activities/tools';
import { MAX_TOOL_RESULT_CHARS } from '../../src/shared/tools';
import { call, removeTempDirs, tempDir } from './helpers';

let cwd: string;
beforeAll(async () => {
  cwd = await tempDir();
});
afterAll(removeTempDirs);

const echoTool: ToolDefinition<{ text: string; times?: number }> = {
  name: 'Echo',
  description: 'Repeats text.',
  schema: z.strictObject({ text: z.string().describe('What to say'), times: z.number().int().optional() }),
  readOnly: true,
  execute: async ({ text, times }) => text.repeat(times ?? 1),
};

describe('registry', () => {
  test('specs are converted from zod once per registry; each call gets its own copies', () => {
    const registry = createToolRegistry([echoTool]);
    const first = registry.specs();
    const schemas = first.map((spec) => spec.inputSchema);
    first[0]!.description = 'changed by a caller';
    first.pop();
    const second = registry.specs();
    // The same converted schemas, not converted again (a conversion was ~2 ms at every session's start).
    expect(second.map((spec) => spec.inputSchema)).toEqual(schemas);
    second.forEach((spec, i) => expect(spec.inputSchema).toBe(schemas[i]));
    expect(second).toHaveLength(schemas.length);
    expect(second[0]!.description).toBe(builtinTools[0]!.description);
    expect(second).toEqual(createToolRegistry([echoTool]).specs());
  });

  test('specs: Claude Code names, JSON Schema from zod, descriptions from .describe()', () => {
    const specs = createToolRegistry().specs();
    expect(specs.map((s) => [s.name, s.readOnly])).toEqual([
      ['Bash', false],
      ['Read', true],
      ['Write', false],
      ['Edit', false],
      ['Glob', true],
      ['Grep', true],
    ]);
    const read = specs.find((s) => s.name === 'Read')!;
    expect(read.inputSchema).toMatchObject({
      type: 'object',
      required: ['file_path'],
      additionalProperties: false,
      properties: { file_path: { type: 'string', description: 'The absolute path to the file to read' } },
    });
    expect(read.inputSchema).not.toHaveProperty('$schema');
    const edit = specs.find((s) => s.name === 'Edit')!;
    expect(edit.inputSchema.required).toEqual(['file_path', 'old_string', 'new_string']);
    const grep = specs.find((s) => s.name === 'Grep')!;
    expect(Object.keys(grep.inputSchema.properties as object)).toEqual([
      'pattern',
      'path',
      'glob',
      'output_mode',
      '-B',
      '-A',
      '-C',
      '-n',
      '-i',
      'type',
      'head_limit',
      'multiline',
    ]);
  });

  test('unknown tool names the available tools', async () => {
    expect(await call(cwd, 'Nope', {})).toEqual({
      content: 'No such tool available: Nope. Available tools: Bash, Read, Write, Edit, Glob, Grep',
      isError: true,
    });
  });

  test('invalid input names the fields', async () => {
    expect(await call(cwd, 'Read', { file_path: 7, limit: 'ten', extra: true })).toEqual({
      content:
        'InputValidationError: Read failed due to the following issues:\n' +
        'The parameter `file_path` type is expected as `string` but provided as `number`\n' +
        'The parameter `limit` type is expected as `number` but provided as `string`\n' +
        'An unexpected parameter `extra` was provided',
      isError: true,
    });
    expect((await call(cwd, 'Grep', { pattern: 'x', output_mode: 'lines' })).content).toBe(
      'InputValidationError: Grep failed due to the following issue:\n' +
        'The parameter `output_mode` is invalid: Invalid option: expected one of "content"|"files_with_matches"|"count"',
    );
    expect((await call(cwd, 'Bash', null)).content).toBe(
      'InputValidationError: Bash failed due to the following issue:\nThe input is expected as `object` but provided as `null`',
    );
  });

  test('a user-registered tool runs, and its output is capped', async () => {
    expect(await call(cwd, 'Echo', { text: 'hi', times: 2 }, { extraTools: [echoTool] })).toEqual({ content: 'hihi', isError: false });
    const big = await call(cwd, 'Echo', { text: 'x', times: MAX_TOOL_RESULT_CHARS + 10 }, { extraTools: [echoTool] });
    expect(big.content).toBe(
      `${'x'.repeat(MAX_TOOL_RESULT_CHARS)}\n\n... [10 characters truncated; the tool result is limited; narrow the ` +
        'request (Read with offset/limit, Grep with head_limit or a narrower path, Bash output redirected to a file) ' +
        'to see the rest]',
    );
    expect(
      createToolRegistry([echoTool])
        .specs()
        .map((s) => s.name),
    ).toContain('Echo');
  });

  test('an exception in a tool becomes an error outcome', async () => {
    const boom: ToolDefinition<Record<string, never>> = {
      name: 'Boom',
      description: 'Throws.',
      schema: z.strictObject({}),
      readOnly: true,
      execute: async () => {
        throw new Error('disk on fire');
      },
    };
    expect(await call(cwd, 'Boom', {}, { extraTools: [boom] })).toEqual({ content: 'Error: disk on fire', isError: true });
  });

  test('duplicate names are refused', () => {
    expect(() => createToolRegistry([{ ...echoTool, name: 'Read' }])).toThrow('Duplicate tool name: Read');
    expect(() => createToolRegistry([echoTool, echoTool])).toThrow('Duplicate tool name: Echo');
    expect(builtinTools).toHaveLength(6);
  });
});
