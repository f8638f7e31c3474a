/**
 * TodoWrite: the model's task list. Pure state, so it lives in the workflow (no activity) and is
 * visible through the `state` query.
 */
import { z } from 'zod';
import { sharedData, sharedSchema } from './shared-schema';
import type { ToolSpec } from './tools';

export const TodoWriteInput = sharedSchema('todo.TodoWriteInput', () =>
  z
    .object({
      todos: z
        .array(
          z.object({
            content: z.string().min(1).describe('What needs doing, imperative form'),
            status: z.enum(['pending', 'in_progress', 'completed']),
            activeForm: z.string().min(1).describe('Present continuous form shown while in progress'),
          }),
        )
        .describe('The updated todo list'),
    })
    .describe('Create and update a structured task list for the current session.'),
);
export type TodoWriteInput = z.infer<typeof TodoWriteInput>;

export const TODO_TOOL = 'TodoWrite';

export const todoWriteSpec: ToolSpec = {
  name: TODO_TOOL,
  description:
    'Create and manage a structured task list for this session: use it for multi-step work, keep exactly one task in_progress, and mark tasks completed as soon as they are done.',
  inputSchema: sharedData('todo.TodoWriteInput.json', () => z.toJSONSchema(TodoWriteInput) as Record<string, unknown>),
  readOnly: true,
};

export const TODO_RESULT =
  'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable';
