/**
 * The `clientTools` session option (ARCHITECTURE.md#client-mcp-tools): the tools of the in-process
 * MCP servers (`createSdkMcpServer`, `type: 'sdk'` in `options.mcpServers`) that the process which
 * called `query()` serves — each tool's server, its own name, description and JSON Schema, never
 * code. The session offers them as `mcp__<server>__<tool>` and asks that process to run each call.
 * Apart from src/shared/client-tools.ts so that the session config can include it without the
 * requests and updates.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import { mcpToolName } from './mcp';

/** How long a call waits for the client when the session sets no `clientToolTimeoutMs`: the MCP SDK's request timeout. */
export const CLIENT_TOOL_DEFAULT_TIMEOUT_MS = 60_000;

/** The model-visible name's tool part: OpenAI function names allow [A-Za-z0-9_-]; anything else becomes `_`, as for worker-side MCP tools. */
function clientToolSafeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The name the model calls a client tool by: `mcp__<server>__<tool>`. */
export function clientToolName(t: { server: string; name: string }): string {
  return mcpToolName(t.server, clientToolSafeName(t.name));
}

export const ClientTool = sharedSchema('client-tools.ClientTool', () =>
  z
    .object({
      server: z
        .string()
        .regex(/^[A-Za-z0-9_-]+$/, 'an MCP server name may only contain letters, digits, _ and - (no __)')
        .refine((s) => !s.includes('__'), 'an MCP server name may only contain letters, digits, _ and - (no __)')
        .describe("The in-process server's name: its key in `mcpServers`."),
      name: z.string().min(1).describe("The server's own name for the tool."),
      description: z.string().default(''),
      inputSchema: z
        .record(z.string(), z.unknown())
        .refine((s) => s.type === 'object', 'must be a JSON Schema of type "object" (an MCP tool\'s inputSchema)'),
      /** The tool's `readOnlyHint`: read-only calls of one turn may run together. */
      readOnly: z.boolean().optional(),
    })
    .strict(),
);
export type ClientTool = z.infer<typeof ClientTool>;

/** The session option `clientTools`: set by `query()` from the in-process servers it connected. */
export const ClientTools = sharedSchema('client-tools.ClientTools', () =>
  z
    .array(ClientTool)
    .min(1)
    .superRefine((tools, ctx) => {
      const seen = new Map<string, number>();
      tools.forEach((t, i) => {
        const name = clientToolName(t);
        const first = seen.get(name);
        if (first !== undefined) {
          ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `${name} is declared twice (also at clientTools.${first})` });
        } else seen.set(name, i);
      });
    }),
);
export type ClientTools = z.infer<typeof ClientTools>;
