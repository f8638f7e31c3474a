/** The tools that run inside the workflow (TodoWrite, TaskComplete) as the model sees them. */
import { DONE_TOOL, TaskCompleteInput, taskCompleteSpec } from '../../src/shared/done-tool';
import { DONE_REMINDER, FINAL_SUMMARY_PROMPT } from '../../src/shared/model-texts';
import { checkAgainstSchema } from '../../src/shared/json-schema';
import { TODO_RESULT, TODO_TOOL, TodoWriteInput, todoWriteSpec } from '../../src/shared/todo';

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

describe('TodoWrite', () => {
  test('is read-only and named as Claude Code names it', () => {
    expect(TODO_TOOL).toBe('TodoWrite');
    expect(todoWriteSpec.name).toBe('TodoWrite');
    expect(todoWriteSpec.readOnly).toBe(true);
    expect(todoWriteSpec.description).toMatch(/^Create and manage a structured task list/);
  });

  test('its input schema', () => {
    expect(todoWriteSpec.inputSchema).toEqual({
      $schema: SCHEMA,
      type: 'object',
      properties: {
        todos: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              content: { type: 'string', minLength: 1, description: 'What needs doing, imperative form' },
              status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
              activeForm: { type: 'string', minLength: 1, description: 'Present continuous form shown while in progress' },
            },
            required: ['content', 'status', 'activeForm'],
            additionalProperties: false,
          },
          description: 'The updated todo list',
        },
      },
      required: ['todos'],
      additionalProperties: false,
      description: 'Create and update a structured task list for the current session.',
    });
  });

  test('the workflow-side check and the zod schema agree on good and bad lists', () => {
    const good = { todos: [{ content: 'Fix it', status: 'in_progress', activeForm: 'Fixing it' }] };
    expect(checkAgainstSchema(good, todoWriteSpec.inputSchema)).toBeNull();
    expect(TodoWriteInput.safeParse(good).success).toBe(true);
    const bad = { todos: [{ content: 'Fix it', status: 'doing', activeForm: 'Fixing it' }] };
    expect(checkAgainstSchema(bad, todoWriteSpec.inputSchema)).toBe(
      '`todos.0.status`: expected one of "pending", "in_progress", "completed"',
    );
    expect(TodoWriteInput.safeParse(bad).success).toBe(false);
    expect(TodoWriteInput.safeParse({ todos: [{ content: '', status: 'pending', activeForm: 'x' }] }).success).toBe(false);
    expect(TodoWriteInput.safeParse({ todos: [{ content: 'x', status: 'pending', activeForm: '' }] }).success).toBe(false);
  });

  test("answers with Claude Code's wording, which models are used to", () => {
    expect(TODO_RESULT).toBe(
      'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable',
    );
  });
});

describe('TaskComplete', () => {
  test('is read-only, takes one non-empty message', () => {
    expect(DONE_TOOL).toBe('TaskComplete');
    expect(taskCompleteSpec.name).toBe('TaskComplete');
    expect(taskCompleteSpec.readOnly).toBe(true);
    expect(taskCompleteSpec.description).toMatch(/The session ends after it\.$/);
    expect(taskCompleteSpec.inputSchema).toEqual({
      $schema: SCHEMA,
      type: 'object',
      properties: {
        message: { type: 'string', minLength: 1, description: 'A short report for the user: what was done and how it was checked' },
      },
      required: ['message'],
      additionalProperties: false,
      description: 'Finish the session.',
    });
    expect(TaskCompleteInput.safeParse({ message: 'done' }).success).toBe(true);
    expect(TaskCompleteInput.safeParse({ message: '' }).success).toBe(false);
  });

  test('the reminder names the tool to call', () => {
    expect(DONE_REMINDER).toBe(
      'You replied without calling a tool. If the task is complete, call TaskComplete with your report; otherwise continue working with the tools.',
    );
  });

  test('the final-summary request says tools are over and what to summarize', () => {
    expect(FINAL_SUMMARY_PROMPT).toBe(
      'You have reached the maximum number of turns for this session and cannot call tools any more. ' +
        'Summarize for the user what you did, what state the work is in, and what remains to be done.',
    );
  });
});
