/**
 * MCP server configs as a session carries them (ARCHITECTURE.md#mcp), and the shapes the workflow
 * and the tools worker exchange about them. Pure: usable in workflow code.
 *
 * A config travels in the workflow input, so it is recorded in history: credentials in headers,
 * the URL, stdio `args` and `env` must be `${VAR}` references, resolved on the worker from its own
 * environment (refuseMcpSecrets, run by every client entry point before anything starts).
 * Only the shape (an object per server) is checked here; a server of an unknown type or without
 * a command is reported `failed` at session start and the session runs without its tools.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import { ConfigError } from './config-error';
import { looksLikeCredential, looksSecret } from './secret-env';
import type { ToolSpec } from './tools';

/** One server's config, as given (Claude Code's `.mcp.json` entries); checked on the worker. */
const McpServerConfigShape = sharedSchema('mcp.McpServerConfigShape', () => z.record(z.string(), z.unknown()));
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

type McpStdioConfig = { type: 'stdio'; command: string; args: string[]; env: Record<string, string> };
type McpRemoteConfig = { type: 'http' | 'sse'; url: string; headers: Record<string, string> };
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

const REFERENCES = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * The worker's own settings: a config may not reference them, so a session cannot send the
 * worker's model key, Temporal credentials or encryption keys to a server of its choosing
 * (ARCHITECTURE.md#mcp). The tools worker also refuses the names in its DURABLE_AGENT_SCRUB_ENV.
 */
const WORKER_OWN_PREFIXES = ['OPENAI_', 'TEMPORAL_', 'ANTHROPIC_', 'DURABLE_AGENT_'];

function isWorkerOwnName(name: string): boolean {
  const upper = name.toUpperCase();
  return WORKER_OWN_PREFIXES.some((p) => upper.startsWith(p));
}

/**
 * Whether a value holds a secret only by reference: `${VAR}`, or an auth scheme and references
 * (`Bearer ${TOKEN}`). A default (`${TOKEN:-…}`) is a literal: only an empty one is allowed.
 */
function byReference(value: string): boolean {
  let literalDefault = false;
  const rest = value.replace(REFERENCES, (_m, _name: string, fallback: string | undefined) => {
    if (fallback) literalDefault = true;
    return '\u0000';
  });
  if (literalDefault || !rest.includes('\u0000')) return false;
  return /^((bearer|basic|token)\s+)?\u0000*$/i.test(rest.trim());
}

/** Headers that carry credentials whatever their names say. */
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-amz-security-token)$/i;
/** Flags whose next argument (or `=value`) is a credential: `--token`, `--api-key`, `--password`, `--client-secret`, … */
const SECRET_FLAG = /^--?([A-Za-z][A-Za-z0-9_-]*)(?:=(.*))?$/s;

class Refusal {
  constructor(
    readonly field: string,
    readonly message: string,
  ) {}
}

const RECORDED = "would be recorded in the session's Temporal history";
const reference = (name: string) =>
  `write a reference such as "\${${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_') || 'SECRET'}}" and set that variable on the tools worker`;

/** A value in a secret position: only `${VAR}` references (of names not the worker's own). */
function secretSlot(field: string, value: string, hintName: string): Refusal | undefined {
  if (!byReference(value)) return new Refusal(field, `looks secret and ${RECORDED}; ${reference(hintName)}`);
  return undefined;
}

/** Any value: a literal shaped like a known token (or a URL with a password), or a reference to the worker's own settings. */
function anySlot(field: string, value: string): Refusal | undefined {
  for (const m of value.matchAll(REFERENCES)) {
    if (isWorkerOwnName(m[1]!))
      return new Refusal(
        field,
        `references \${${m[1]}}, one of the worker's own settings (OPENAI_*, ANTHROPIC_*, TEMPORAL_*, DURABLE_AGENT_*), which MCP servers never get; set the server's secret under a name of its own on the tools worker`,
      );
  }
  if (looksLikeCredential(value)) return new Refusal(field, `holds what looks like a credential, which ${RECORDED}; ${reference('VAR')}`);
  return undefined;
}

function urlRefusals(field: string, url: string): Refusal[] {
  const out: Refusal[] = [];
  const userinfo = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#@]*)@/.exec(url)?.[1];
  if (userinfo?.includes(':')) {
    const password = userinfo.slice(userinfo.indexOf(':') + 1);
    const r = secretSlot(`${field} (password)`, decodeSafe(password), 'PASSWORD');
    if (r) out.push(r);
  }
  const q = url.indexOf('?');
  if (q >= 0) {
    const query = url.slice(q + 1).split('#')[0]!;
    for (const pair of query.split('&')) {
      if (!pair) continue;
      const eq = pair.indexOf('=');
      const key = decodeSafe(eq < 0 ? pair : pair.slice(0, eq));
      const value = eq < 0 ? '' : decodeSafe(pair.slice(eq + 1).replace(/\+/g, ' '));
      if (value !== '' && looksSecret(key)) {
        const r = secretSlot(`${field} (query parameter ${key})`, value, key);
        if (r) out.push(r);
      }
    }
  }
  return out;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function argsRefusals(field: string, args: unknown[]): Refusal[] {
  const out: Refusal[] = [];
  args.forEach((arg, i) => {
    if (typeof arg !== 'string') return;
    const flag = SECRET_FLAG.exec(arg.trim());
    if (!flag || !looksSecret(flag[1]!)) return;
    if (flag[2] !== undefined) {
      const r = secretSlot(`${field}.${i}`, flag[2], flag[1]!);
      if (r) out.push(r);
      return;
    }
    const next = args[i + 1];
    // `--token --verbose`: a flag, not a value.
    if (typeof next === 'string' && !next.startsWith('-')) {
      const r = secretSlot(`${field}.${i + 1}`, next, flag[1]!);
      if (r) out.push(r);
    }
  });
  return out;
}

function recordOf(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Refuse, naming the field, credentials written into a config (ARCHITECTURE.md#mcp): they would be
 * recorded in the session's history. Secret-named env variables and headers, any credential-named
 * header (`PRIVATE-TOKEN`, `X-Auth-Token`, …), a URL's password and credential-named query
 * parameters, and the argument after a credential flag (`--token`, `--api-key`, `--password`, or
 * `--flag=value`) must be `${VAR}` references resolved on the tools worker; any field holding a
 * literal shaped like a known token is refused too, as is a reference to the worker's own settings.
 */
export function refuseMcpSecrets(servers: McpServersOption, field = 'mcpServers'): void {
  for (const [name, cfg] of Object.entries(servers)) {
    const at = `${field}.${name}`;
    const found: Refusal[] = [];
    for (const [k, v] of Object.entries(recordOf(cfg.env))) {
      if (typeof v !== 'string') continue;
      const r = (looksSecret(k) ? secretSlot(`${at}.env.${k}`, v, k) : undefined) ?? anySlot(`${at}.env.${k}`, v);
      if (r) found.push(r);
    }
    for (const [k, v] of Object.entries(recordOf(cfg.headers))) {
      if (typeof v !== 'string') continue;
      const secret = SECRET_HEADERS.test(k) || looksSecret(k);
      const r = (secret ? secretSlot(`${at}.headers.${k}`, v, k) : undefined) ?? anySlot(`${at}.headers.${k}`, v);
      if (r) found.push(r);
    }
    if (typeof cfg.url === 'string') {
      found.push(...urlRefusals(`${at}.url`, cfg.url));
      const r = anySlot(`${at}.url`, cfg.url);
      if (r) found.push(r);
    }
    if (Array.isArray(cfg.args)) {
      found.push(...argsRefusals(`${at}.args`, cfg.args));
      cfg.args.forEach((a, i) => {
        const r = typeof a === 'string' ? anySlot(`${at}.args.${i}`, a) : undefined;
        if (r) found.push(r);
      });
    }
    if (typeof cfg.command === 'string') {
      const r = anySlot(`${at}.command`, cfg.command);
      if (r) found.push(r);
    }
    const first = found[0];
    if (first) throw new ConfigError(`${first.field}: ${first.message}`, first.field);
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
