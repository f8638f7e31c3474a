/**
 * TaskComplete: with `requireDoneTool`, a session ends only when the model calls this tool, so a
 * reply without tool calls is not mistaken for "finished". Runs in the workflow.
 */
import { z } from 'zod';
import { sharedData, sharedSchema } from './shared-schema';
import type { ToolSpec } from './tools';

export const DONE_TOOL = 'TaskComplete';

export const TaskCompleteInput = sharedSchema('doneTool.TaskCompleteInput', () =>
  z
    .object({ message: z.string().min(1).describe('A short report for the user: what was done and how it was checked') })
    .describe('Finish the session.'),
);

export const taskCompleteSpec: ToolSpec = {
  name: DONE_TOOL,
  description: 'Call this once the task is complete and verified, with a short report for the user. The session ends after it.',
  inputSchema: sharedData('doneTool.TaskCompleteInput.json', () => z.toJSONSchema(TaskCompleteInput) as Record<string, unknown>),
  readOnly: true,
};
