/**
 * Session options for keeping a long session inside its model's context window: proactive
 * compaction (summarize the older part of the transcript), and trimming of old tool outputs.
 * The lead adds this to `SessionConfig` as `compaction: CompactionConfig.prefault({})`.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';

export const CompactionConfig = sharedSchema('compaction.CompactionConfig', () =>
  z
    .object({
      enabled: z.boolean().default(true).describe('Summarize older turns when the context nears the window.'),
      threshold: z
        .number()
        .gt(0)
        .max(0.95)
        .default(0.8)
        .describe('Compact when the estimated prompt reaches this share of the context window.'),
      keepRecentTurns: z
        .number()
        .int()
        .min(0)
        .default(4)
        .describe('Model turns (an assistant message and its tool results) kept verbatim after compaction.'),
      keepRecentTokens: z
        .number()
        .int()
        .positive()
        .optional()
        .describe('Cap on the estimated tokens kept verbatim; default a quarter of the context window.'),
      contextWindow: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("Override the model's context window (tokens); default from the pricing table."),
      toolResultBudgetChars: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe(
          'Characters of tool output kept in the transcript before older results are trimmed; 0 disables trimming. Default: 40% of the context window (at 4 characters a token).',
        ),
      keepRecentToolResultTurns: z
        .number()
        .int()
        .min(0)
        .default(3)
        .describe('The tool results of this many most recent turns are never trimmed.'),
      summaryModel: z.string().min(1).optional().describe('Model that writes summaries; default the session model.'),
      summaryMaxTokens: z.number().int().positive().default(8_192).describe('Output token limit of a summary.'),
    })
    .strict(),
);
export type CompactionConfig = z.infer<typeof CompactionConfig>;
