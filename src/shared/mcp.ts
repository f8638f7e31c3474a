/**
 * MCP server configs as a session carries them (ARCHITECTURE.md#mcp), and the shapes the workflow
 * and the tools worker exchange about them. Pure: usable in workflow code.
 *
 * A config travels in the workflow input, so it is recorded in history: env values and headers
 * that look secret must be `${VAR}` references, resolved on the worker from its own environment.
 * Only the shape (an object per server) is checked here; a server of an unknown type or without
 * a command is reported `failed` at session start and the session runs without its tools.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import { ConfigError } from './config-error';
import { looksSecret } from './secret-env';
import type { ToolSpec } from './tools';

/** One server's config, as given (Claude Code's `.mcp.json` entries); checked on the worker. */
export const McpServerConfigShape = sharedSchema('mcp.McpServerConfigShape', () => z.record(z.string(), z.unknown()));
export const McpServersOption = sharedSchema('mcp.McpServersOption', () =>
  z.record(z.string(), McpServerConfigShape).superRefine((servers, ctx) => {
    for (const name of Object.keys(servers)) {
      // No `__` either: it separates the server from the tool in `mcp__<server>__<tool>`.
      if (!/^[A-Za-z0-9_-]+$/.test(name) || name.includes('__'))
        ctx.addIssue({ code: 'custom', path: [name], message: 'an MCP server name may only contain letters, digits, _ and - (no __)' });
    }
  }),
);
export type McpServersOption = z.infer<typeof McpServersOption>;

export type McpStdioConfig = { type: 'stdio'; command: string; args: string[]; env: Record<string, string> };
export type McpRemoteConfig = { type: 'http' | 'sse'; url: string; headers: Record<string, string> };
export type McpServerConfig = McpStdioConfig | McpRemoteConfig;

/** The SDK's `McpServerStatus` (the subset we report). */
export interface McpServerState {
  name: string;
  status: 'connected' | 'failed';
  error?: string;
}

export interface ListMcpToolsInput {
  servers: McpServersOption;
  /** Where stdio servers start: the session's cwd. */
  cwd?: string;
}

export interface ListMcpToolsResult {
  /** Tool specs named `mcp__<server>__<tool>`, with `mcp` set. */
  tools: ToolSpec[];
  servers: McpServerState[];
}

export interface CallMcpToolInput {
  server: string;
  config: Record<string, unknown>;
  /** The server's own tool name, or a resource tool (`MCP_LIST_RESOURCES`, `MCP_READ_RESOURCE`) when `resource`. */
  tool: string;
  resource?: boolean;
  input: unknown;
  cwd?: string;
}

/** Resource tools added for a server that has resources (Claude Code's ListMcpResources / ReadMcpResource, per server). */
export const MCP_LIST_RESOURCES = 'list_resources';
export const MCP_READ_RESOURCE = 'read_resource';

const PREFIX = 'mcp__';

export function mcpToolName(server: string, tool: string): string {
  return `${PREFIX}${server}__${tool}`;
}

/** Parse a registered tool name: server names hold no `__`, so the first `__` after the prefix splits it. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(PREFIX)) return undefined;
  const rest = name.slice(PREFIX.length);
  const at = rest.indexOf('__');
  if (at <= 0) return undefined;
  return { server: rest.slice(0, at), tool: rest.slice(at + 2) };
}

const REFERENCES = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/g;

/** Whether a value holds a secret only by reference: `${VAR}`, or an auth scheme and references (`Bearer ${TOKEN}`). */
function byReference(value: string): boolean {
  const rest = value.replace(REFERENCES, '\u0000');
  if (!rest.includes('\u0000')) return false;
  return /^((bearer|basic|token)\s+)?\u0000*$/i.test(rest.trim());
}
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;

/**
 * Refuse, naming the field, literal values that look secret: env variables with a secret-looking
 * name and credential headers must be `${VAR}` references (ARCHITECTURE.md#secrets-stay-on-workers).
 */
export function refuseMcpSecrets(servers: McpServersOption, field = 'mcpServers'): void {
  for (const [name, cfg] of Object.entries(servers)) {
    const check = (key: 'env' | 'headers', secret: (k: string) => boolean) => {
      const values = cfg[key];
      if (!values || typeof values !== 'object') return;
      for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
        if (typeof v === 'string' && secret(k) && !byReference(v))
          throw new ConfigError(
            `${field}.${name}.${key}.${k}: looks secret and would be recorded in the session's Temporal history; ` +
              `write a reference such as "\${${k.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}}" and set that variable on the tools worker`,
            `${field}.${name}.${key}.${k}`,
          );
      }
    };
    check('env', looksSecret);
    check('headers', (k) => SECRET_HEADERS.test(k) || looksSecret(k));
  }
}

/**
 * Claude Code's `.mcp.json` (`{"mcpServers": {...}}`) from its text; `source` names the file in
 * errors. Throws ConfigError naming the field.
 */
export function parseMcpConfigFile(text: string, source: string): McpServersOption {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${source}: not valid JSON: ${(e as Error).message}`, 'mcpServers');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${source}: expected a JSON object`, 'mcpServers');
  const obj = raw as Record<string, unknown>;
  const servers = 'mcpServers' in obj ? obj.mcpServers : undefined;
  if (servers === undefined)
    throw new ConfigError(`${source}: mcpServers: missing (expected {"mcpServers": {"name": {...}}})`, 'mcpServers');
  const parsed = McpServersOption.safeParse(servers);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = ['mcpServers', ...issue.path.map(String)].join('.');
    throw new ConfigError(`${source}: ${path}: ${issue.message}`, path);
  }
  refuseMcpSecrets(parsed.data, `${source}: mcpServers`);
  return parsed.data;
}

/**
 * The check sessions were started under before credentials had to be references everywhere,
 * frozen: workflow code validates its input with it (parseSessionConfig), and a stricter rule
 * there would fail, on replay, sessions that started under this one. New rules go into
 * refuseMcpSecrets, which every client entry point runs before anything starts.
 */
export function refuseMcpSecretsAsRecorded(servers: McpServersOption, field = 'mcpServers'): void {
  const legacyLooksSecret = (name: string) => {
    const upper = name.toUpperCase();
    return (
      ['OPENAI_', 'ANTHROPIC_', 'AWS_', 'AZURE_', 'GOOGLE_APPLICATION_CREDENTIALS'].some((p) => upper.startsWith(p)) ||
      ['_KEY', '_KEYS', '_TOKEN', '_PAT'].some((s) => upper.endsWith(s)) ||
      ['SECRET', 'PASSWORD', 'PASSWD', 'CREDENTIAL', 'PRIVATE_KEY'].some((s) => upper.includes(s))
    );
  };
  const legacyByReference = (value: string) => {
    const rest = value.replace(REFERENCES, '\u0000');
    if (!rest.includes('\u0000')) return false;
    return /^((bearer|basic|token)\s+)?\u0000*$/i.test(rest.trim());
  };
  for (const [name, cfg] of Object.entries(servers)) {
    const check = (key: 'env' | 'headers', secret: (k: string) => boolean) => {
      const values = cfg[key];
      if (!values || typeof values !== 'object') return;
      for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
        if (typeof v === 'string' && secret(k) && !legacyByReference(v))
          throw new ConfigError(
            `${field}.${name}.${key}.${k}: looks secret and would be recorded in the session's Temporal history; ` +
              `write a reference such as "\${${k.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}}" and set that variable on the tools worker`,
            `${field}.${name}.${key}.${k}`,
          );
      }
    };
    check('env', legacyLooksSecret);
    check('headers', (k) => /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i.test(k) || legacyLooksSecret(k));
  }
}
