/**
 * What looks like a credential, and the one rule for a session's `env` at every entry point (the
 * client's `start`, hence `query()` and the CLI; batch jobs through `parseJob`).
 *
 * A session's `env` travels in its workflow input, so it is recorded in Temporal history; secrets
 * must not be (ARCHITECTURE.md#secrets-stay-on-workers). The SDK idiom `env: { ...process.env }`
 * would copy the caller's keys and its host's own variables there, so entries whose name or value
 * looks like a credential, and the client host's own variables (PATH, HOME, …), are dropped before
 * anything is sent — never stored — and named in a warning (values are never echoed). The tools
 * host's own PATH, HOME, … stay. Pure: also used by workflow code (the warning's text).
 */

/** Prefixes of names that belong to a credential or to a provider's account settings. */
const SECRET_PREFIXES = ['OPENAI_', 'ANTHROPIC_', 'AWS_', 'AZURE_', 'GOOGLE_APPLICATION_CREDENTIALS'];
/** Anywhere in the upper-cased name, words run together included (`DBPASSWORD`, `GITHUBAPIKEY`). */
const SECRET_INFIXES = [
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'APIKEY',
  'API_KEY',
  'PRIVATE_KEY',
  'PRIVATEKEY',
  'ACCESS_KEY',
  'ACCESSKEY',
  'AUTHTOKEN',
  'AUTH_TOKEN',
];
/** Whole words of the name (split at anything not a letter or digit): `DB_PASS`, `NPM-TOKEN`, `X_AUTH`. */
const SECRET_WORDS = new Set([
  'TOKEN',
  'TOKENS',
  'KEY',
  'KEYS',
  'PAT',
  'PASS',
  'PWD',
  'COOKIE',
  'COOKIES',
  'CREDS',
  'DSN',
  'JWT',
  'BEARER',
]);
/** Words that make a name a reference to a credential rather than one: `TOKEN_FILE` holds a path. */
const REFERENCE_WORDS = new Set(['FILE', 'PATH', 'DIR', 'NAME']);

/**
 * Whether a variable's (or header's, or flag's) name looks like it holds a secret:
 * case-insensitive, any separator. `KEYBOARD_LAYOUT` and `TOKENIZERS_PARALLELISM` do not.
 */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  if (SECRET_PREFIXES.some((p) => upper.startsWith(p))) return true;
  const words = upper.split(/[^A-Z0-9]+/).filter(Boolean);
  if (words.length > 1 && REFERENCE_WORDS.has(words[words.length - 1]!)) return false;
  if (SECRET_INFIXES.some((s) => upper.includes(s))) return true;
  return words.some((w) => SECRET_WORDS.has(w)) || /.TOKENS?$/.test(words[words.length - 1] ?? '');
}

/**
 * Known token shapes, anywhere in a value (`--token=ghp_…`, `Bearer sk-…`): GitHub, GitLab,
 * OpenAI/Anthropic/Stripe (`sk-`, `sk_live_`, `rk_live_`), Slack, AWS key ids, Google API keys and
 * OAuth tokens, npm, PyPI, Hugging Face, DigitalOcean, SendGrid, Shopify, JWTs, PEM private keys.
 */
const TOKEN_SHAPES: readonly RegExp[] = [
  /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{16,}/,
  /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{16,}/,
  /(?<![A-Za-z0-9])gl(?:pat|dt|ptt|rt|oas|cbt|imt|ft|agent|soat)-[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])[sr]k[-_](?:live_|test_|proj-|ant-|svcacct-)?[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])xox[abposrec]-[A-Za-z0-9-]{8,}/,
  /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/,
  /(?<![A-Za-z0-9])AIza[A-Za-z0-9_-]{30,}/,
  /(?<![A-Za-z0-9])ya29\.[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{30,}/,
  /(?<![A-Za-z0-9])pypi-[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}/,
  /(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{32,}/,
  /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}/,
  /(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/,
  /-----BEGIN[A-Z ]*PRIVATE KEY-----/,
  /(?:^|;)\s*(?:AccountKey|SharedAccessKey|Password|Pwd)\s*=\s*[^;\s]/i,
];

/** `scheme://user:password@host`, unless the password is only a reference (`${DB_PASSWORD}`, `$P`). */
const URL_PASSWORD = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/@:]*:([^\s/@]+)@/g;
const ONLY_REFERENCE = /^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$/;

/** A long run of base64/hex-alphabet characters mixing cases and digits, with high entropy: a key. */
function looksRandom(value: string): boolean {
  // A path or URL (a temp dir's random name in it) is judged part by part; a base64 key holds `/`
  // too, but does not start like a path.
  const parts = /^(\/|~\/|\.\.?\/|[A-Za-z][A-Za-z0-9+.-]*:\/\/)/.test(value.trim()) ? value.split('/') : [value];
  const runs = parts.flatMap((part) => part.match(/[A-Za-z0-9+/=_-]{32,}/g) ?? []);
  for (const run of runs) {
    if (!/[a-z]/.test(run) || !/[A-Z]/.test(run) || !/[0-9]/.test(run)) continue;
    const counts = new Map<string, number>();
    for (const c of run) counts.set(c, (counts.get(c) ?? 0) + 1);
    let bits = 0;
    for (const n of counts.values()) bits -= (n / run.length) * Math.log2(n / run.length);
    if (bits >= 4.2) return true;
  }
  return false;
}

/**
 * Whether a value looks like a credential: a known token shape, a URL with a password, or a long
 * high-entropy key. Whitespace anywhere does not hide one (`ghp_ abc…` is read without it too).
 */
export function looksLikeCredential(value: string): boolean {
  const variants = [value, value.replace(/\s+/g, '')];
  for (const v of variants) {
    if (TOKEN_SHAPES.some((re) => re.test(v))) return true;
    if (looksRandom(v)) return true;
  }
  for (const m of value.matchAll(URL_PASSWORD)) if (!ONLY_REFERENCE.test(decodeSafe(m[1]!))) return true;
  return false;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A client host's own variables: they describe the machine the caller runs on, not the tools host,
 * and would replace the tools host's own in Bash (ARCHITECTURE.md#secrets-stay-on-workers).
 */
const HOST_NAMES = new Set([
  'PATH',
  'HOME',
  'SHELL',
  'TMPDIR',
  'TMP',
  'TEMP',
  'PWD',
  'OLDPWD',
  'USER',
  'USERNAME',
  'LOGNAME',
  'HOSTNAME',
  'HOSTTYPE',
  'SHLVL',
  '_',
  'MAIL',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'DBUS_SESSION_BUS_ADDRESS',
  'GPG_AGENT_INFO',
  'INIT_CWD',
  'TERM_PROGRAM',
  'TERM_PROGRAM_VERSION',
  'TERM_SESSION_ID',
  'WINDOWID',
  'TMUX',
  'TMUX_PANE',
  'STY',
  'LD_LIBRARY_PATH',
  'LD_PRELOAD',
  'DYLD_LIBRARY_PATH',
  'DYLD_INSERT_LIBRARIES',
]);
const HOST_PREFIXES = ['XDG_', 'SSH_', 'VSCODE_', 'ITERM_', 'KITTY_', 'WSL_', 'GNOME_', 'KDE_', 'SUDO_'];

function isHostSpecificName(name: string): boolean {
  const upper = name.toUpperCase();
  // npm sets its lower-case npm_config_* / npm_package_* for a script; NPM_CONFIG_REGISTRY is a user's.
  return HOST_NAMES.has(upper) || HOST_PREFIXES.some((p) => upper.startsWith(p)) || name.startsWith('npm_');
}

type DroppedEnvReason = 'credential-name' | 'credential-value' | 'host';

/** One entry of a session's `env` that was not sent; `name` is masked when the name itself looks like a token. */
export interface DroppedEnv {
  name: string;
  reason: DroppedEnvReason;
}

/** How a name that itself looks like a credential is shown (it must not be stored either). */
export const MASKED_NAME = '(a name that looks like a credential)';

/**
 * The one rule for a session's `env`: what may be sent, and what was dropped (sorted by name).
 * Entries whose value is `undefined` (the SDK's type allows it) are left out silently.
 */
export function screenSessionEnv(env: Record<string, string | undefined> | undefined): {
  env: Record<string, string>;
  dropped: DroppedEnv[];
} {
  const kept: Record<string, string> = {};
  const dropped: DroppedEnv[] = [];
  // Not an object of strings: passed on as it is, for the session's schema to refuse by name.
  if (env === undefined || env === null || typeof env !== 'object' || Array.isArray(env)) return { env: env as never, dropped };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (typeof value !== 'string') {
      kept[name] = value as never;
      continue;
    }
    const shown = looksLikeCredential(name) || name.length > 128 ? MASKED_NAME : name;
    if (shown !== MASKED_NAME && HOST_NAMES.has(name.toUpperCase())) dropped.push({ name, reason: 'host' });
    else if (shown === MASKED_NAME || looksSecret(name)) dropped.push({ name: shown, reason: 'credential-name' });
    else if (looksLikeCredential(value)) dropped.push({ name, reason: 'credential-value' });
    else if (isHostSpecificName(name)) dropped.push({ name, reason: 'host' });
    else kept[name] = value;
  }
  dropped.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { env: kept, dropped };
}

const WHY: Record<DroppedEnvReason, string> = {
  'credential-name': 'its name looks like a credential',
  'credential-value': 'its value looks like a credential',
  host: "the client host's own; the tools host's stays",
};

/** Up to this many dropped entries the warning gives each one's reason; past it, it is summarized. */
export const LIST_EACH_UP_TO = 12;

/**
 * The warning a session shows (stream and stderr) for what its `env` lost; names only, never values.
 * A whole `process.env` drops dozens of the host's own variables: past LIST_EACH_UP_TO entries the
 * warning groups them by reason, and host variables of one family (`npm_*`, `XDG_*`, …) are
 * counted, not listed; every credential-looking name is still named.
 */
export function droppedEnvWarning(dropped: readonly DroppedEnv[]): string {
  const secrets = dropped.some((d) => d.reason !== 'host');
  const items = dropped.length <= LIST_EACH_UP_TO ? dropped.map((d) => `${d.name} (${WHY[d.reason]})`).join(', ') : summarized(dropped);
  return (
    `env: dropped ${items}: not sent, not stored in the session's history.` +
    (secrets
      ? ' Secrets stay on the workers: set the variable in the tools worker’s environment and name it in DURABLE_AGENT_PASS_ENV there (README "Secrets").'
      : '')
  );
}

const GROUP_WHY: Record<DroppedEnvReason, string> = {
  'credential-name': 'names that look like credentials',
  'credential-value': 'values that look like credentials',
  host: "the client host's own; the tools host's stay",
};

/** `38 entries: A, B (names that look like credentials); HOME, PATH, npm_* (28) (the client host's own; …)`. */
function summarized(dropped: readonly DroppedEnv[]): string {
  const groups = (['credential-name', 'credential-value', 'host'] as const).flatMap((reason) => {
    const counts = new Map<string, { n: number; first: string }>();
    for (const d of dropped) {
      if (d.reason !== reason) continue;
      const family = reason === 'host' ? hostFamily(d.name) : undefined;
      const key = family ? `${family}*` : d.name;
      const seen = counts.get(key);
      counts.set(key, { n: (seen?.n ?? 0) + 1, first: seen?.first ?? d.name });
    }
    if (!counts.size) return [];
    const names = [...counts].map(([key, { n, first }]) => (n === 1 ? first : key.endsWith('*') ? `${key} (${n})` : `${key} ×${n}`));
    return [`${names.join(', ')} (${GROUP_WHY[reason]})`];
  });
  return `${dropped.length} entries: ${groups.join('; ')}`;
}

/** The prefix a host variable shares with its family (`npm_`, `XDG_`, …), if any. */
function hostFamily(name: string): string | undefined {
  if (name.startsWith('npm_')) return 'npm_';
  const upper = name.toUpperCase();
  const prefix = HOST_PREFIXES.find((p) => upper.startsWith(p));
  return prefix ? name.slice(0, prefix.length) : undefined;
}
