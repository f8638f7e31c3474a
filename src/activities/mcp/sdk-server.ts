/**
 * The Claude Agent SDK's in-process MCP helpers, `tool()` and `createSdkMcpServer()`
 * (ARCHITECTURE.md#mcp). A session's options are recorded in history, so code cannot travel in
 * them: such a server either runs in the process that called `query()`, which serves its tools to
 * the session (`mcpServers`; ARCHITECTURE.md#client-mcp-tools), or is registered on the worker —
 * `createWorker({ tools: [server] })` — and its tools join the registry as `mcp__<server>__<tool>`,
 * run by `runTool` like the built-ins.
 */
import { z } from 'zod';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { mcpToolName } from '../../shared/mcp';
import { errorMessage, type ToolDefinition } from '../tools/types';
import { mcpResultText } from './result-text';

/** A zod object shape (the SDK's `ZodRawShape`), or a zod object. */
export type ToolInputSchema = Record<string, z.ZodType> | z.ZodObject;

type ArgsOf<S> = S extends z.ZodObject ? z.infer<S> : S extends Record<string, z.ZodType> ? z.infer<z.ZodObject<S>> : never;

export interface SdkMcpToolDefinition<S extends ToolInputSchema = ToolInputSchema> {
  name: string;
  description: string;
  inputSchema: S;
  handler: (args: ArgsOf<S>, extra: unknown) => Promise<CallToolResult>;
  annotations?: ToolAnnotations;
}

export interface McpSdkServerConfigWithInstance {
  type: 'sdk';
  name: string;
  version?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools of many input types
  tools: SdkMcpToolDefinition<any>[];
}

/** The SDK's `tool(name, description, inputSchema, handler, extras?)`. */
export function tool<S extends ToolInputSchema>(
  name: string,
  description: string,
  inputSchema: S,
  handler: (args: ArgsOf<S>, extra: unknown) => Promise<CallToolResult>,
  extras?: { annotations?: ToolAnnotations },
): SdkMcpToolDefinition<S> {
  return { name, description, inputSchema, handler, ...(extras?.annotations ? { annotations: extras.annotations } : {}) };
}

/** The SDK's `createSdkMcpServer({ name, version?, tools? })`: give the result to `query()`'s `mcpServers`, or register it with `createWorker({ tools })`. */
export function createSdkMcpServer(options: {
  name: string;
  version?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools of many input types
  tools?: SdkMcpToolDefinition<any>[];
}): McpSdkServerConfigWithInstance {
  if (!/^[A-Za-z0-9_-]+$/.test(options.name))
    throw new Error(`createSdkMcpServer: name ${JSON.stringify(options.name)}: only letters, digits, _ and - are allowed`);
  return { type: 'sdk', name: options.name, ...(options.version ? { version: options.version } : {}), tools: options.tools ?? [] };
}

export function isSdkMcpServer(v: unknown): v is McpSdkServerConfigWithInstance {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'sdk' && Array.isArray((v as { tools?: unknown }).tools);
}

/** The server's tools as registry tools named `mcp__<server>__<tool>`. */
export function sdkServerTools(server: McpSdkServerConfigWithInstance): ToolDefinition[] {
  return server.tools.map((t) => {
    const schema = t.inputSchema instanceof z.ZodObject ? t.inputSchema : z.object(t.inputSchema as Record<string, z.ZodType>);
    return {
      name: mcpToolName(server.name, t.name),
      description: t.description,
      schema,
      readOnly: t.annotations?.readOnlyHint === true,
      async execute(input: unknown) {
        try {
          const out = await t.handler(input as never, {});
          return { content: mcpResultText(out), isError: out.isError === true };
        } catch (e) {
          return { content: `Error: ${errorMessage(e)}`, isError: true };
        }
      },
    };
  });
}
