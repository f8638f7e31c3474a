/**
 * An MCP server config as the session gave it → the config the worker connects with
 * (ARCHITECTURE.md#mcp): the type checked, `${VAR}` / `${VAR:-default}` references resolved from
 * this worker's environment — never its own settings (OPENAI_*, TEMPORAL_*, …) or the names in its
 * DURABLE_AGENT_SCRUB_ENV. A problem is a reason string (the server is reported `failed`), not
 * an exception: the session runs on without that server.
 */
import type { McpServerConfig } from '../../shared/mcp';
import { isWorkerOwnEnvName, parseScrubList, SCRUB_ENV_VAR } from '../tools/env';

export type Resolved = { ok: true; config: McpServerConfig } | { ok: false; reason: string };

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expand(value: string, field: string, env: NodeJS.ProcessEnv, missing: string[]): string {
  const scrub = parseScrubList(env[SCRUB_ENV_VAR]);
  return value.replace(REF, (_m, name: string, fallback: string | undefined) => {
    // A session chooses its servers: it must not be able to send the worker's own keys to one.
    if (isWorkerOwnEnvName(name, scrub)) {
      missing.push(
        `${field}: \${${name}} is one of the tools worker's own settings (or in its ${SCRUB_ENV_VAR}), which MCP servers never get`,
      );
      return '';
    }
    const v = env[name];
    if (v !== undefined) return v;
    if (fallback !== undefined) return fallback;
    missing.push(`${field}: \${${name}} is not set on the tools worker`);
    return '';
  });
}

function stringRecord(v: unknown, field: string): Record<string, string> | string {
  if (v === undefined) return {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return `${field}: expected an object of strings`;
  for (const [k, x] of Object.entries(v)) if (typeof x !== 'string') return `${field}.${k}: expected a string`;
  return v as Record<string, string>;
}

export function resolveMcpConfig(raw: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Resolved {
  const type = raw.type ?? (raw.url !== undefined ? undefined : 'stdio');
  const fail = (reason: string): Resolved => ({ ok: false, reason });
  const missing: string[] = [];
  if (type === 'stdio') {
    if (typeof raw.command !== 'string' || raw.command.trim() === '') return fail('command: missing (a stdio server needs a command)');
    const args = raw.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) return fail('args: expected an array of strings');
    const envIn = stringRecord(raw.env, 'env');
    if (typeof envIn === 'string') return fail(envIn);
    const config: McpServerConfig = {
      type: 'stdio',
      command: expand(raw.command, 'command', env, missing),
      args: (args as string[]).map((a, i) => expand(a, `args.${i}`, env, missing)),
      env: Object.fromEntries(Object.entries(envIn).map(([k, v]) => [k, expand(v, `env.${k}`, env, missing)])),
    };
    return missing.length ? fail(missing.join('; ')) : { ok: true, config };
  }
  if (type === 'http' || type === 'sse') {
    if (typeof raw.url !== 'string' || raw.url === '') return fail(`url: missing (an ${type} server needs a url)`);
    const headersIn = stringRecord(raw.headers, 'headers');
    if (typeof headersIn === 'string') return fail(headersIn);
    const url = expand(raw.url, 'url', env, missing);
    try {
      new URL(url);
    } catch {
      if (!missing.length) return fail(`url: not a valid URL: ${url}`);
    }
    const headers = Object.fromEntries(Object.entries(headersIn).map(([k, v]) => [k, expand(v, `headers.${k}`, env, missing)]));
    return missing.length ? fail(missing.join('; ')) : { ok: true, config: { type, url, headers } };
  }
  if (type === 'sdk')
    return fail('type: "sdk" servers run in-process: register them on the worker with createWorker({ tools: [createSdkMcpServer(...)] })');
  if (type === undefined) return fail('type: missing (expected "stdio", "http" or "sse")');
  return fail(`type: unknown type ${JSON.stringify(type)} (expected "stdio", "http" or "sse")`);
}
