/**
 * A session's `env` travels in its workflow input, so it is recorded in Temporal history; secrets
 * must not be (ARCHITECTURE.md#secrets-stay-on-workers). The SDK idiom `env: { ...process.env }`
 * would copy the caller's keys there, so names that look secret are refused before anything
 * starts, with the names listed. Values are never inspected or echoed.
 */
import { ConfigError } from './config-error';

const SECRET_PREFIXES = ['OPENAI_', 'ANTHROPIC_', 'AWS_', 'AZURE_', 'GOOGLE_APPLICATION_CREDENTIALS'];
const SECRET_SUFFIXES = ['_KEY', '_KEYS', '_TOKEN', '_PAT'];
const SECRET_INFIXES = ['SECRET', 'PASSWORD', 'PASSWD', 'CREDENTIAL', 'PRIVATE_KEY'];

/** Whether a variable's name looks like it holds a secret (case-insensitive). */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    SECRET_PREFIXES.some((p) => upper.startsWith(p)) ||
    SECRET_SUFFIXES.some((s) => upper.endsWith(s)) ||
    SECRET_INFIXES.some((s) => upper.includes(s))
  );
}

/** Throw a ConfigError naming every variable of `env` whose name looks secret. */
export function refuseSecretEnv(env: Record<string, unknown> | undefined, field = 'env'): void {
  const names = Object.keys(env ?? {})
    .filter(looksSecret)
    .sort();
  if (names.length === 0) return;
  throw new ConfigError(
    `${field}: ${names.join(', ')} ${names.length === 1 ? 'looks' : 'look'} secret and would be recorded in the session's Temporal history. ` +
      "Secrets stay on the workers: the model endpoint's key is read from the worker's environment (OPENAI_API_KEY); " +
      `remove ${names.length === 1 ? 'it' : 'them'} from ${field} (README "Secrets")`,
    field,
  );
}
