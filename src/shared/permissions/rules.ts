/**
 * Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`. Parsed rules are plain
 * JSON (no RegExp inside), so they may be carried in workflow state; patterns compile on use.
 */
import { z } from 'zod';
import { sharedSchema } from '../shared-schema';
import { ConfigError } from '../config-error';

export type RuleList = 'allow' | 'deny' | 'ask';

interface RuleBase {
  /** The rule as written, e.g. `Bash(npm test:*)`. */
  text: string;
  /** Where it came from (an option name or a settings file), for messages. */
  source?: string;
}

export type BashPattern =
  | { type: 'any' }
  | { type: 'exact'; command: string }
  /** `prefix *` (or legacy `prefix:*`): the prefix alone, or the prefix, a space, anything. */
  | { type: 'prefix'; prefix: string }
  /** Any other use of `*`; `\*` is a literal star. */
  | { type: 'wildcard'; pattern: string };

export type PermissionRule = RuleBase &
  (
    | { kind: 'tool'; tool: string }
    /** `mcp__server` or `mcp__server__*`: every tool of that MCP server. */
    | { kind: 'mcpServer'; server: string }
    | { kind: 'bash'; tool: 'Bash'; pattern: BashPattern }
    /** `Read(…)`, `Edit(…)`, `Write(…)`: a gitignore-style path pattern (see paths.ts). */
    | { kind: 'path'; tool: 'Read' | 'Edit' | 'Write'; pattern: string }
    | { kind: 'agent'; tool: 'Task'; agent: string }
    | { kind: 'domain'; tool: 'WebFetch'; domain: string }
  );

/** A rule that cannot be parsed: a config error naming the rule, raised before anything starts. */
export class PermissionRuleError extends ConfigError {
  constructor(
    readonly rule: string,
    readonly reason: string,
    field = 'rule',
  ) {
    super(`${field === 'rule' ? '' : `${field}: `}invalid permission rule '${rule}': ${reason}`, field);
    this.name = 'PermissionRuleError';
  }
}

const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const MCP_SERVER = /^mcp__([A-Za-z0-9_-]+?)(?:__\*)?$/;
const SPECIFIER_TOOLS = 'Bash, Read, Edit, Write, Task (or Agent) and WebFetch';

/** Parse one rule; throws PermissionRuleError with the rule text and why. */
export function parseRule(text: string, source?: string): PermissionRule {
  const fail = (reason: string): never => {
    throw new PermissionRuleError(text, reason);
  };
  const rule = text.trim();
  if (!rule) return fail('the rule is empty');
  const open = rule.indexOf('(');
  if (open < 0) {
    if (rule.includes(')')) return fail("')' without '('");
    return { text, source, ...bareRule(rule, fail) };
  }
  if (!rule.endsWith(')')) return fail("a specifier must end with ')' (expected Tool(specifier))");
  const tool = rule.slice(0, open);
  const spec = rule.slice(open + 1, -1);
  if (!TOOL_NAME.test(tool)) return fail(`'${tool}' is not a tool name`);
  if (tool.startsWith('mcp__')) return fail('MCP rules take no specifier: write mcp__server or mcp__server__tool');
  if (spec.trim() === '') return fail(`the specifier is empty; write ${tool} to match every call`);
  switch (tool) {
    case 'Bash':
      if (spec.trim() === '*') return { text, source, kind: 'tool', tool }; // Bash(*) is Bash
      return { text, source, kind: 'bash', tool, pattern: parseBashPattern(spec, fail) };
    case 'Read':
    case 'Edit':
    case 'Write':
      return { text, source, kind: 'path', tool, pattern: checkPathPattern(spec, fail) };
    case 'Task':
    case 'Agent':
      return { text, source, kind: 'agent', tool: 'Task', agent: spec.trim() };
    case 'WebFetch': {
      const m = /^domain:(.+)$/.exec(spec.trim());
      if (!m) return fail('WebFetch rules take the form WebFetch(domain:example.com)');
      return { text, source, kind: 'domain', tool, domain: m[1]!.toLowerCase() };
    }
    default:
      return fail(`specifiers are supported only for ${SPECIFIER_TOOLS}; write the bare name ${tool} to match every call`);
  }
}

function bareRule(rule: string, fail: (reason: string) => never): { kind: 'tool'; tool: string } | { kind: 'mcpServer'; server: string } {
  const mcp = MCP_SERVER.exec(rule);
  if (mcp && !rule.slice(5).includes('__')) return { kind: 'mcpServer', server: mcp[1]! };
  if (mcp && rule.endsWith('__*')) return { kind: 'mcpServer', server: mcp[1]! };
  if (rule.includes('*')) return fail('a wildcard in a tool name is supported only as mcp__server__*');
  if (!TOOL_NAME.test(rule)) return fail(`'${rule}' is not a tool name (expected Tool or Tool(specifier))`);
  return { kind: 'tool', tool: rule === 'Agent' ? 'Task' : rule };
}

function checkPathPattern(spec: string, fail: (reason: string) => never): string {
  if (/^~[^/]/.test(spec)) return fail('~user paths are not supported; write ~/path, //absolute/path, /project/path or relative/path');
  if (spec.includes('\0')) return fail('the path contains a NUL byte');
  return spec;
}

/** `*` is a wildcard unless escaped as `\*`; `\\` is a literal backslash. */
function hasUnescapedStar(spec: string): boolean {
  for (let i = 0; i < spec.length; i++) {
    if (spec[i] === '\\') i++;
    else if (spec[i] === '*') return true;
  }
  return false;
}

function unescape(spec: string): string {
  return spec.replace(/\\([\\*])/g, '$1');
}

export function parseBashPattern(
  raw: string,
  fail: (reason: string) => never = (reason) => {
    throw new PermissionRuleError(`Bash(${raw})`, reason);
  },
): BashPattern {
  const spec = raw.trim();
  if (spec === '*') return { type: 'any' };
  // Legacy `prefix:*` is the same as `prefix *` (a word boundary after the prefix).
  const legacy = /^(.*?):\*$/s.exec(spec);
  if (legacy && !legacy[1]!.trim()) return fail("':*' needs a command prefix before it, e.g. Bash(npm test:*)");
  const body = legacy ? `${legacy[1]!.trimEnd()} *` : spec;
  if (!hasUnescapedStar(body)) return { type: 'exact', command: unescape(body) };
  const head = body.slice(0, -2);
  if (body.endsWith(' *') && !hasUnescapedStar(head) && !head.endsWith('\\')) return { type: 'prefix', prefix: unescape(head).trimEnd() };
  return { type: 'wildcard', pattern: body };
}

const compiled = new Map<string, RegExp>();

function wildcardRegex(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    let src = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '\\' && (pattern[i + 1] === '*' || pattern[i + 1] === '\\')) src += escapeRegex(pattern[++i]!);
      else if (c === '*') src += '[\\s\\S]*';
      else src += escapeRegex(c);
    }
    re = new RegExp(`^${src}$`);
    compiled.set(pattern, re);
  }
  return re;
}

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Does one simple command (already split out of a compound line) match the pattern? */
export function matchBashPattern(pattern: BashPattern, command: string): boolean {
  const cmd = command.trim();
  switch (pattern.type) {
    case 'any':
      return true;
    case 'exact':
      return cmd === pattern.command;
    case 'prefix':
      return cmd === pattern.prefix || cmd.startsWith(`${pattern.prefix} `) || cmd.startsWith(`${pattern.prefix}\t`);
    case 'wildcard':
      return wildcardRegex(pattern.pattern).test(cmd);
  }
}

/** Tools a rule naming `tool` covers: `Edit` rules cover every file-editing tool, `Read` rules the file searches. */
const FAMILIES: Record<string, readonly string[]> = {
  Edit: ['Edit', 'Write', 'MultiEdit', 'NotebookEdit'],
  Read: ['Read', 'Glob', 'Grep'],
  Task: ['Task', 'Agent'],
};

export function ruleCoversTool(rule: PermissionRule, toolName: string): boolean {
  if (rule.kind === 'mcpServer') return toolName.startsWith(`mcp__${rule.server}__`);
  const family = Object.hasOwn(FAMILIES, rule.tool) ? FAMILIES[rule.tool]! : [rule.tool];
  return family.includes(toolName);
}

/** A list of rule strings, each checked with parseRule: one that does not parse is an issue at its index. */
export const PermissionRuleList = sharedSchema('rules.PermissionRuleList', () =>
  z.array(z.string()).superRefine((rules, ctx) =>
    rules.forEach((rule, i) => {
      try {
        parseRule(rule);
      } catch (e) {
        if (!(e instanceof PermissionRuleError)) throw e;
        ctx.addIssue({ code: 'custom', path: [i], message: e.message });
      }
    }),
  ),
);

/** Rules parsed per list. */
export interface PermissionRules {
  allow: readonly PermissionRule[];
  deny: readonly PermissionRule[];
  ask: readonly PermissionRule[];
}

/** Parse the three lists; the error names the list and index (`disallowedTools[2]`). */
export function parseRules(
  lists: { allow?: readonly string[]; deny?: readonly string[]; ask?: readonly string[] },
  names = { allow: 'allowedTools', deny: 'disallowedTools', ask: 'askTools' },
): PermissionRules {
  const parse = (list: RuleList) =>
    (lists[list] ?? []).map((text, i) => {
      try {
        return parseRule(text, names[list]);
      } catch (e) {
        if (e instanceof PermissionRuleError) throw new PermissionRuleError(e.rule, e.reason, `${names[list]}[${i}]`);
        throw e;
      }
    });
  return { allow: parse('allow'), deny: parse('deny'), ask: parse('ask') };
}
