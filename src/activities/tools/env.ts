/**
 * Bash children get the worker's environment minus its secrets (ARCHITECTURE.md#secrets-stay-on-workers), plus the session's
 * own `env`. The worker's API keys and Temporal settings never reach a model-driven command.
 */

/** Worker variable listing extra names to scrub (comma-separated; `PREFIX_*` / `*_SUFFIX` allowed). */
export const SCRUB_ENV_VAR = 'DURABLE_AGENT_SCRUB_ENV';

const SCRUB_PREFIXES = ['OPENAI_', 'TEMPORAL_', 'ANTHROPIC_', 'DURABLE_AGENT_'];
const SCRUB_SUFFIXES = ['_API_KEY', '_TOKEN'];
const SCRUB_INFIXES = ['_SECRET'];

export function parseScrubList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function matchesName(name: string, rule: string): boolean {
  if (rule.endsWith('*') && !rule.startsWith('*')) return name.startsWith(rule.slice(0, -1));
  if (rule.startsWith('*') && !rule.endsWith('*')) return name.endsWith(rule.slice(1));
  if (rule.startsWith('*') && rule.endsWith('*') && rule.length > 1) return name.includes(rule.slice(1, -1));
  return name === rule;
}

/** Whether a worker variable must not reach a Bash child. */
export function isScrubbedEnvName(name: string, extra: readonly string[] = []): boolean {
  const upper = name.toUpperCase();
  if (SCRUB_PREFIXES.some((p) => upper.startsWith(p))) return true;
  if (SCRUB_SUFFIXES.some((s) => upper.endsWith(s))) return true;
  if (SCRUB_INFIXES.some((s) => upper.includes(s))) return true;
  return extra.some((rule) => matchesName(name, rule));
}

export interface ChildEnvOptions {
  base: NodeJS.ProcessEnv;
  scrub?: readonly string[];
  /** The session's `env`: added after scrubbing, so a session may set any name it wants. */
  sessionEnv?: Record<string, string>;
}

export function buildChildEnv({ base, scrub = [], sessionEnv = {} }: ChildEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && !isScrubbedEnvName(name, scrub)) env[name] = value;
  }
  return { ...env, ...sessionEnv };
}
